// @ts-check
// The fake gemini.google.com page (docs/sites.md#gemini, docs/sites.md#input-fallbacks,
// docs/sites.md#language-independent-selectors, docs/sites.md#gemini-stuck). Light DOM only:
// every project that works against the real site reads it with plain document.querySelector
// (SITE-FACTS G2.8), so there are no shadow roots and no custom elements the evidence does not
// name; Angular's own elements (rich-textarea, infinite-scroller, user-query, model-response,
// message-content, mat-icon) are plain unknown elements here. Each structure cites its
// SITE-FACTS row; texts no source shows are marked "unevidenced".
'use strict';

(() => {
  const { el, svgIcon, nowEpoch, report, MarkdownView, renderMarkdown, readParagraphs,
    FrameReader } = FakeKit;
  const parse = FakeKit.parseJson;
  const config = FakeKit.config();

  const EN = {
    placeholder: 'Ask Gemini', // unevidenced (Quill's data-placeholder)
    inputLabel: 'Enter a prompt for Gemini', // [G1.1]
    send: 'Send message', // [G1.3]
    stop: 'Stop response', // [G1.5]
    youSaid: 'You said', // [G2.5]
    geminiSaid: 'Gemini said', // [G2.5]
    good: 'Good response', // [G2.6]
    bad: 'Bad response', // [G2.6]
    stopped: 'You stopped this response', // [G3.6]
    error: 'Something went wrong. Please try again.', // [G5.4]
    // Only "reached your limit" and "try again later" are evidenced [G5.5].
    rateLimit: "You've reached your limit for today. Please try again later.",
    signIn: 'Sign in', // [G5.1]
    notFound: "This conversation couldn't be found", // unevidenced
    upload: 'Upload & tools', // [G8.1] (ARA, 2026-09-03; earlier "Open upload file menu")
    uploadFiles: 'Upload files', // unevidenced
    removeFile: 'Remove file', // [G8.3] "Remove file <name>"
    consentTitle: 'Creating content from images and files', // [G5.3]
    consentBody: 'Files you upload are used to create content and to improve Google services.', // unevidenced
    cancel: 'Cancel', // [G5.3]
    agree: 'Agree', // [G5.3]
    tools: 'Tools', // [G10.1]
    deepThink: 'Deep Think', // [G10.1]
    deselectDeepThink: 'Deselect Deep Think', // [G10.1]
    deepThinkPlaceholder: 'Ask a complex question', // [G10.1]
    // The other tools of the same menu [G10.1], inert here.
    otherTools: ['Deep Research', 'Create image', 'Canvas', 'Guided Learning'],
    downloadImage: 'Download full size image', // [G12.3]
    deepResearch: 'Deep Research', // [G11.1]
    deselectDeepResearch: 'Deselect Deep Research', // [G11.1]
    researchPlan: 'Research plan', // unevidenced (the widget's title text)
    startResearch: 'Start research', // [G11.3]
    researching: 'Researching…', // unevidenced
    researchDone: "I've completed your research", // [G11.5]
    exportMenu: 'Export menu', // [G11.7]
  };
  /** @type {typeof EN} */
  const JA = {
    ...EN,
    placeholder: 'プロンプトを入力', // [G1.1] (JP placeholder)
    inputLabel: 'プロンプトを入力', // unevidenced as an aria-label (the placeholder's text)
    send: 'プロンプトを送信', // [G1.3]
    stop: '回答を停止', // [G1.5]
    youSaid: 'あなたのプロンプト', // unevidenced
    geminiSaid: 'Gemini の回答', // unevidenced
    good: '良い回答', // [G2.6]
    bad: '悪い回答', // [G2.6]
    stopped: 'この回答は停止されました', // unevidenced
    error: '問題が発生しました。もう一度お試しください。', // unevidenced
    // Unevidenced: no Japanese limit text is documented; the wire code 1037 is the signal.
    rateLimit: '本日の上限に達しました。しばらくしてからもう一度お試しください。',
    signIn: 'ログイン', // unevidenced
    notFound: 'この会話は見つかりませんでした', // unevidenced
    downloadImage: '原本サイズ画像をダウンロード', // unevidenced (G12.3 quotes the Korean only)
  };
  // No German Gemini text is documented: "de" keeps the English labels.
  const TEXT = config.locale === 'ja' ? JA : EN;
  const STREAM_PATH = '/_/BardChatUi/data/assistant.lamda.BardFrontendService/StreamGenerate';
  const USAGE_LIMIT = 1037; // [G5.5]

  const root = el('div', {});
  document.body.prepend(root);
  /** @type {string|null} */
  // A conversation /app/<id> [G6.1], or a chat inside a Gem /gem/<gem id>/<chat id> [G9.1].
  const gemMatch = /^\/gem\/([^/]+)(?:\/([^/]+))?/.exec(location.pathname);
  const gemId = gemMatch ? gemMatch[1] : '';
  let conversationId =
    (gemMatch ? gemMatch[2] : (/^\/app\/([^/]+)/.exec(location.pathname) || [])[1]) || null;
  let temporary = false; // the temporary-chat button's state [G13.1]
  let deepThink = false; // Deep Think chosen in the Tools menu [G10.1]
  let deepResearch = false; // Deep Research chosen in the Tools menu [G11.1]
  /** Redraws the Tools chips (set by toolsDrawer). */
  let showChips = () => {};
  let requestCount = 0;

  /**
   * @typedef {{text: string, xhr: XMLHttpRequest|null, questionId: string, stuck: boolean,
   *            stopped: boolean, finished: boolean, response: HTMLElement,
   *            content: HTMLElement, message: HTMLElement, footer: HTMLElement,
   *            view: InstanceType<typeof MarkdownView>, conversationId: string|null,
   *            latest: string, errorCode: number|null, shown: boolean,
   *            deepThink: boolean, placeholder: boolean, rolledBack: boolean,
   *            images: any[], deepResearch: boolean, research: string}} Generation
   */
  /** @type {Generation|null} */
  let generation = null;
  /** @type {{editor: HTMLElement, send: HTMLElement, mic: HTMLElement, slot: HTMLElement,
   *          readonly text: string, clear(): void}|null} */
  let composer = null;
  /** @type {HTMLElement|null} */
  let scroller = null;

  /** The history [G2.1]: infinite-scroller#chat-history inside its (non-scrolling) parent. */
  function chatHistory() {
    if (!scroller) {
      scroller = el('infinite-scroller', {
        'data-test-id': 'chat-history-container', id: 'chat-history', class: 'chat-history',
      });
      root.prepend(el('div', { class: 'chat-history-scroll-container' }, scroller));
      // The virtualized history keeps its view itself when it renders or removes exchanges;
      // the browser's own scroll anchoring would move it a second time.
      scroller.style.overflowAnchor = 'none';
      scroller.addEventListener('scroll', onHistoryScroll);
    }
    return scroller;
  }

  function scrollToEnd() {
    if (scroller) scroller.scrollTop = scroller.scrollHeight;
  }

  // ---- the virtualized history [G2.1] -----------------------------------------------------------
  // About 10 messages are rendered: a loaded conversation shows its newest SHOWN exchanges; as the
  // scroller nears its top, the SHOWN before them render a moment later (the view kept where it
  // was), and beyond MOST rendered exchanges the ones at the other end are removed, kept aside so
  // scrolling back renders the same elements again, ids and all. A new question first brings
  // back everything below. Not modelled: the page scrolling itself back to the bottom about a
  // second after a scroll [G2.1].
  const SHOWN = 5;
  const MOST = 10;
  /** @type {HTMLElement[]} exchanges above the rendered ones, oldest first */
  const above = [];
  /** @type {HTMLElement[]} exchanges below the rendered ones, oldest first */
  const below = [];
  let loadingHistory = false;

  const renderedExchanges = () => /** @type {HTMLElement[]} */ (
    [...chatHistory().querySelectorAll(':scope > div.conversation-container')]);

  /** A conversation just loaded: only its newest exchanges stay rendered. */
  function virtualize() {
    const rendered = renderedExchanges();
    for (const exchange of rendered.slice(0, Math.max(0, rendered.length - SHOWN))) {
      exchange.remove();
      above.push(exchange);
    }
    scrollToEnd();
    // A view the rendered ones do not fill cannot be scrolled up: render more at once.
    while (above.length && scroller && scroller.scrollHeight <= scroller.clientHeight) showAbove();
  }

  function showAbove() {
    if (!scroller || !above.length) return;
    const height = scroller.scrollHeight;
    scroller.prepend(...above.splice(Math.max(0, above.length - SHOWN)));
    scroller.scrollTop += scroller.scrollHeight - height;
    for (const exchange of renderedExchanges().slice(MOST).reverse()) {
      exchange.remove();
      below.unshift(exchange);
    }
  }

  function showBelow() {
    if (!scroller || !below.length) return;
    scroller.append(...below.splice(0, SHOWN));
    const rendered = renderedExchanges();
    const height = scroller.scrollHeight;
    for (const exchange of rendered.slice(0, Math.max(0, rendered.length - MOST))) {
      exchange.remove();
      above.push(exchange);
    }
    scroller.scrollTop -= height - scroller.scrollHeight;
  }

  function onHistoryScroll() {
    if (loadingHistory || !scroller) return;
    const up = above.length > 0 && scroller.scrollTop < 40;
    const down = below.length > 0 &&
      scroller.scrollTop + scroller.clientHeight > scroller.scrollHeight - 40;
    if (!up && !down) return;
    loadingHistory = true;
    // "A moment later": a task of its own (not a timer: a background tab runs those once a
    // second at most, which the site's network-fed rendering is not held to).
    const later = new MessageChannel();
    later.port1.onmessage = () => {
      later.port1.close();
      loadingHistory = false;
      if (up) showAbove();
      else showBelow();
    };
    later.port2.postMessage(null);
  }

  // ---- recent chats -----------------------------------------------------------------------------
  // Links to the recent chats, from the batchexecute RPC MaZiqc [G7.4] (its payload here is the
  // fake's own). No source shows the real sidebar's markup: a plain list of links to /app/<id>
  // [G6.1], without classes; the inline style is looks only.
  const recent = el('div', {
    style: 'position: fixed; top: 0; left: 0; bottom: 0; width: 150px; overflow-y: auto; ' +
      'padding: 8px; box-sizing: border-box; font-size: 12px; background: #f8fafd',
  });

  async function loadRecent() {
    /** @type {any[]} */
    let listed = [];
    try {
      const reply = await fetch('/_/BardChatUi/data/batchexecute?rpcids=MaZiqc&rt=c', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
        body: 'f.req=' + encodeURIComponent(JSON.stringify([[['MaZiqc', '[]', null, 'generic']]])),
      });
      if (!reply.ok) return;
      for (const frame of new FrameReader().push(await reply.text() + '\n')) {
        for (const part of Array.isArray(frame) ? frame : []) {
          if (Array.isArray(part) && part[1] === 'MaZiqc' && typeof part[2] === 'string') {
            const chats = parse(part[2]);
            if (Array.isArray(chats)) listed = chats;
          }
        }
      }
    } catch (error) {
      return;
    }
    recent.replaceChildren(...listed.filter(Array.isArray).map(([id, title]) =>
      el('a', { href: `/app/${String(id).replace(/^c_/, '')}` }, String(title))));
    if (!recent.isConnected) {
      document.body.append(recent);
      root.style.marginLeft = '150px';
    }
  }

  /** @returns {string} 16 hex digits, the shape of Gemini's ids [G6.1] */
  function hexId() {
    return Array.from(crypto.getRandomValues(new Uint8Array(8)),
      (b) => b.toString(16).padStart(2, '0')).join('');
  }

  // ---- turns [G2.2–G2.7] -----------------------------------------------------------------------

  /** @param {string} text @returns {HTMLElement} the conversation-container of the exchange */
  function addExchange(text) {
    const query = el('user-query', {},
      el('user-query-content', {}, // [G2.3]
        el('span', { class: 'cdk-visually-hidden' }, TEXT.youSaid), // [G2.5]
        el('div', { class: 'query-text' },
          ...text.split('\n').map((line) => el('p', { class: 'query-text-line' }, line)))));
    const exchange = el('div', { class: 'conversation-container', id: hexId() }, query);
    if (below.length) chatHistory().append(...below.splice(0)); // the newest exchanges first
    chatHistory().append(exchange);
    scrollToEnd();
    return exchange;
  }

  /** @type {{site: 'gemini'}} */
  const FLAVOR = { site: 'gemini' };

  /**
   * model-response → .response-container → header ("Gemini said"), .response-content →
   * message-content.model-response-text → div.markdown, then .response-footer [G2.4–G2.7].
   * The ids wait for the response id (r_…) from the stream.
   * @param {HTMLElement} exchange
   */
  function addResponse(exchange) {
    const markdown = el('div', { class: 'markdown' });
    const message = el('message-content', { class: 'model-response-text' }, markdown);
    const content = el('div', { class: 'response-content' },
      el('div', { role: 'progressbar' }), message); // the spinner while working [G4.2]
    const footer = el('div', { class: 'response-footer' });
    const response = el('model-response', {},
      el('div', { class: 'response-container' },
        el('div', { class: 'response-container-header' },
          el('span', { class: 'cdk-visually-hidden' }, TEXT.geminiSaid)),
        content, footer));
    exchange.append(response);
    scrollToEnd();
    // Gemini's page puts the text in at once (no background-tab quirk documented).
    const view = new MarkdownView(markdown, FLAVOR, (v) => v.fill());
    return { response, content, message, footer, view };
  }

  /** @param {HTMLElement} message @param {string} responseId r_… */
  function nameResponse(message, responseId) {
    const id = responseId.replace(/^r_/, '');
    if (message.id) return;
    message.id = `message-content-id-r_${id}`; // [G2.4]
    message.firstElementChild?.setAttribute('id', `model-response-message-contentr_${id}`);
  }

  /** Done: the footer gains `complete` and the feedback buttons [G2.6, G2.7].
   * @param {HTMLElement} footer @param {HTMLElement} content */
  function complete(footer, content) {
    content.querySelector('[role="progressbar"]')?.remove();
    /** @param {string} label */
    const button = (label) => el('button', { type: 'button', 'aria-label': label }, svgIcon());
    footer.replaceChildren(button(TEXT.good), button(TEXT.bad));
    footer.classList.add('complete');
  }

  // ---- attachments [G8.1–G8.3] ------------------------------------------------------------------
  // "Upload & tools" [G8.1] opens a menu whose item [data-test-id="local-images-files-uploader-
  // button"] [G8.1] clicks the hidden trigger [data-test-id="hidden-local-file-upload-button"],
  // which opens the chooser of a hidden file input; trigger and input exist only once the menu
  // was opened (ARA, 2026-09-03) [G8.2]. A chosen file shows [data-test-id="file-preview"] with
  // its name as title and in [data-test-id="file-name"], and a "Remove file <name>" button
  // [G8.3]. No source shows an upload's progress, so the preview shows none. The file uploads
  // to the fake's own host (the real endpoint is content-push.googleapis.com [G7.5]), and a
  // question sent before its upload finished goes without it (the fake's choice: what Gemini
  // does then is not documented). The menu's markup and "Upload files" are the fake's.

  /** @typedef {{file: File, preview: HTMLElement, id: string, done: boolean}} Staged */
  /** @type {Staged[]} */
  const staged = [];
  const previews = el('div', {});
  /** @type {HTMLElement|null} the hidden trigger and input, made when the menu first opens */
  let uploader = null;

  /** @param {File} file */
  function stage(file) {
    const remove = el('button', { type: 'button', 'aria-label': `${TEXT.removeFile} ${file.name}` },
      svgIcon());
    const preview = el('div', { 'data-test-id': 'file-preview', title: file.name },
      el('span', { 'data-test-id': 'file-name' }, file.name), remove);
    /** @type {Staged} */
    const item = { file, preview, id: '', done: false };
    const drop = () => {
      const index = staged.indexOf(item);
      if (index >= 0) staged.splice(index, 1);
      preview.remove();
    };
    remove.addEventListener('click', drop);
    staged.push(item);
    previews.append(preview);
    FakeKit.uploadFile(file).then((stored) => {
      item.id = stored.id;
      item.done = true;
    }, drop);
  }

  /** The uploaded files for the request, as HYG's client sends them ([[[id, 1], name], …]),
   * or null; the previews leave the composer. */
  function takeAttachments() {
    const sent = staged.filter((s) => s.done).map((s) => [[s.id, 1], s.file.name]);
    staged.length = 0;
    previews.replaceChildren();
    return sent.length ? sent : null;
  }

  function makeUploader() {
    const input = /** @type {HTMLInputElement} */ (el('input', {
      type: 'file', multiple: true, style: 'display: none',
    }));
    input.addEventListener('change', () => {
      for (const file of Array.from(input.files || [])) stage(file);
    });
    const trigger = el('button', {
      type: 'button', class: 'hidden-local-file-upload-button',
      'data-test-id': 'hidden-local-file-upload-button', style: 'display: none',
    });
    trigger.addEventListener('click', () => input.click());
    return el('div', { class: 'file-uploader' }, trigger, input); // [G8.2]
  }

  // The first upload of a profile (with the behaviour's `upload_consent`) asks consent first
  // [G5.3]: "Creating content from images and files" with Cancel and Agree, in a blocking
  // dialog (`mat-dialog-container[role="dialog"]` [G5.3]) over a backdrop that takes every
  // click; no file chooser opens until Agree, which is remembered in the page's localStorage
  // (the real site's memory of it is not documented) and then opens the chooser. Cancel and
  // Escape close it, remembering nothing. The body text is unevidenced, and the overlay
  // around the container is plain elements (its real markup is not documented).
  const CONSENT_KEY = 'fake-gemini-upload-consent';
  const consented = () => !config.uploadConsent || localStorage.getItem(CONSENT_KEY) === 'agreed';

  /** @param {() => void} then what the upload does once agreed */
  function askConsent(then) {
    if (document.querySelector('mat-dialog-container')) return;
    const cancel = el('button', { type: 'button' }, TEXT.cancel);
    const agree = el('button', { type: 'button' }, TEXT.agree);
    const overlay = el('div', {},
      el('div', {
        style: 'position: fixed; inset: 0; background: rgba(0, 0, 0, 0.3)',
      }),
      el('div', {
        style: 'position: fixed; inset: 0; display: flex; align-items: center; ' +
          'justify-content: center; pointer-events: none',
      }, el('div', { style: 'pointer-events: auto' },
        el('mat-dialog-container', {
          role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'upload-consent-title',
          tabindex: '-1',
          style: 'display: block; background: #fff; padding: 24px; max-width: 420px',
        },
        el('h2', { id: 'upload-consent-title' }, TEXT.consentTitle),
        el('div', {}, TEXT.consentBody),
        el('div', {}, cancel, agree)))));
    /** @param {KeyboardEvent} event */
    const onKey = (event) => { if (event.key === 'Escape') close(); };
    const close = () => {
      overlay.remove();
      document.removeEventListener('keydown', onKey);
    };
    cancel.addEventListener('click', close);
    agree.addEventListener('click', () => {
      localStorage.setItem(CONSENT_KEY, 'agreed');
      close();
      then();
    });
    document.addEventListener('keydown', onKey);
    document.body.append(overlay);
  }

  /** @returns {HTMLElement[]} the menu button and its menu */
  function uploadControls() {
    const menu = el('div', { hidden: true });
    const item = el('button', {
      type: 'button', 'data-test-id': 'local-images-files-uploader-button',
    }, TEXT.uploadFiles);
    menu.append(item);
    const open = el('button', { type: 'button', 'aria-label': TEXT.upload }, svgIcon());
    open.addEventListener('click', () => {
      if (!uploader) {
        uploader = makeUploader();
        menu.after(uploader);
      }
      menu.hidden = !menu.hidden;
    });
    item.addEventListener('click', () => {
      menu.hidden = true;
      const choose = () => {
        const trigger = uploader?.querySelector('[data-test-id="hidden-local-file-upload-button"]');
        if (trigger instanceof HTMLElement) trigger.click();
      };
      if (consented()) choose();
      else askConsent(choose); // [G5.3]
    });
    return [open, menu];
  }

  // ---- the mode picker [G1.6] ----------------------------------------------------------------------

  // Fast / Thinking / Pro, with option ids bard-mode-option-fast and -thinking as public drivers
  // click them [G1.6, docs/sites.md#modes]; -pro and the descriptions are unevidenced.
  const MODES = [
    { id: 'fast', label: 'Fast', about: 'Answers quickly' },
    { id: 'thinking', label: 'Thinking', about: 'Solves complex problems' },
    { id: 'pro', label: 'Pro', about: 'Thinks longer for advanced math and code' },
  ];
  let modeId = 'fast';

  /**
   * The mode switch `button[data-test-id="bard-mode-menu-button"]` opens
   * `gem-menu[data-test-id="gem-mode-menu"][role="menu"]` in an overlay pane, one
   * `gem-menu-item[role="menuitem"]` per mode (`data-test-id="bard-mode-option-<id>"`,
   * `data-mode-id`), its name in `.label`, the chosen one's `gem-menu-item-content` with class
   * `selected` [G1.6]. A choice closes the menu; so do Escape and a second click. With the
   * behaviour's `modeSticks` false a choice does not hold.
   */
  function modePicker() {
    const labelOf = () => (MODES.find((m) => m.id === modeId) || MODES[0]).label;
    const primary = el('span', { class: 'picker-primary-text' }, labelOf());
    const button = el('button', {
      type: 'button', class: 'input-area-switch', 'data-test-id': 'bard-mode-menu-button',
      'aria-label': 'Open mode picker', 'aria-haspopup': 'menu', 'aria-expanded': 'false',
    }, primary);
    /** @type {HTMLElement|null} */
    let pane = null;
    const close = () => {
      if (!pane) return;
      pane.remove();
      pane = null;
      button.setAttribute('aria-expanded', 'false');
    };
    const open = () => {
      const items = MODES.map((m) => {
        const item = el('gem-menu-item', {
          role: 'menuitem', 'data-test-id': `bard-mode-option-${m.id}`, 'data-mode-id': m.id,
          tabindex: '-1',
        }, el('gem-menu-item-content', { class: m.id === modeId ? 'selected' : '' },
          el('span', { class: 'label' }, m.label), el('span', { class: 'description' }, m.about)));
        item.addEventListener('click', () => {
          if (config.modeSticks !== false) modeId = m.id;
          primary.textContent = labelOf();
          close();
        });
        return item;
      });
      pane = el('div', { class: 'cdk-overlay-pane' },
        el('gem-menu', { 'data-test-id': 'gem-mode-menu', role: 'menu' }, ...items));
      const r = button.getBoundingClientRect();
      pane.style.left = `${r.left}px`;
      pane.style.bottom = `${window.innerHeight - r.top + 4}px`;
      document.body.append(pane);
      button.setAttribute('aria-expanded', 'true');
    };
    button.addEventListener('click', () => (pane ? close() : open()));
    document.addEventListener('keydown', (event) => { if (event.key === 'Escape') close(); });
    return button;
  }

  // ---- the Tools drawer and Deep Think [G10.1] -------------------------------------------------

  /**
   * `button.toolbox-drawer-button` (aria "Tools") opens a `[role="menu"]` overlay of
   * `[role="menuitemcheckbox"]` tools: "Deep Think" and, inert, the others of G10.1. Choosing
   * Deep Think closes the menu, shows the chip `button.toolbox-drawer-item-deselect-button`
   * "Deselect Deep Think" (a click on it turns Deep Think off) and changes the placeholder to
   * "Ask a complex question" [G10.1]. With the behaviour's `deepThink` "absent" the menu has
   * no Deep Think, with "disabled" it is `aria-disabled` (the fake's own stand-ins); with
   * `modeSticks` false a choice does not hold. The menu's markup is the fake's.
   * @returns {HTMLElement[]} the Tools button and the chip's slot
   */
  function toolsDrawer() {
    const button = el('button', {
      type: 'button', class: 'toolbox-drawer-button', 'aria-label': TEXT.tools,
      'aria-haspopup': 'menu', 'aria-expanded': 'false',
    }, TEXT.tools);
    const chipSlot = el('div', {});
    /** @type {HTMLElement|null} */
    let pane = null;
    const show = () => {
      const chip = el('button', {
        type: 'button', class: 'toolbox-drawer-item-deselect-button',
        'aria-label': TEXT.deselectDeepThink,
      }, TEXT.deepThink);
      chip.addEventListener('click', () => {
        deepThink = false;
        show();
      });
      const research = el('button', {
        type: 'button', class: 'toolbox-drawer-item-deselect-button',
        'aria-label': TEXT.deselectDeepResearch,
      }, TEXT.deepResearch);
      research.addEventListener('click', () => {
        deepResearch = false;
        show();
      });
      chipSlot.replaceChildren(...(deepThink ? [chip] : []), ...(deepResearch ? [research] : []));
      composer?.editor.setAttribute('data-placeholder',
        deepThink ? TEXT.deepThinkPlaceholder : TEXT.placeholder);
    };
    const close = () => {
      if (!pane) return;
      pane.remove();
      pane = null;
      button.setAttribute('aria-expanded', 'false');
    };
    const open = () => {
      /** @param {string} label @param {boolean} checked */
      const item = (label, checked) => el('div', {
        role: 'menuitemcheckbox', 'aria-checked': String(checked), tabindex: '-1',
        class: 'toolbox-drawer-item',
      }, label);
      const items = TEXT.otherTools.map((label) => {
        // Deep Research [G11.1] with Behaviour.research offered (or disabled); inert else.
        if (label === TEXT.deepResearch && config.research !== 'absent') {
          const research = item(label, deepResearch);
          if (config.research === 'disabled') research.setAttribute('aria-disabled', 'true');
          research.addEventListener('click', () => {
            if (config.research === 'disabled') return;
            deepResearch = !deepResearch;
            show();
            close();
          });
          return research;
        }
        const other = item(label, false);
        other.addEventListener('click', close);
        return other;
      });
      if (config.deepThink !== 'absent') {
        const think = item(TEXT.deepThink, deepThink);
        if (config.deepThink === 'disabled') think.setAttribute('aria-disabled', 'true');
        think.addEventListener('click', () => {
          if (config.deepThink === 'disabled') return;
          if (config.modeSticks !== false) deepThink = !deepThink;
          show();
          close();
        });
        items.unshift(think);
      }
      // Looks only: a pane sized by its items (the page's `body > div` rule would stretch it).
      pane = el('div', { class: 'cdk-overlay-pane', style: 'display: block; height: auto' },
        el('div', { role: 'menu', style: 'display: block; margin: 0; padding: 0' }, ...items));
      const r = button.getBoundingClientRect();
      pane.style.left = `${r.left}px`;
      pane.style.bottom = `${window.innerHeight - r.top + 4}px`;
      document.body.append(pane);
      button.setAttribute('aria-expanded', 'true');
    };
    button.addEventListener('click', () => (pane ? close() : open()));
    document.addEventListener('keydown', (event) => { if (event.key === 'Escape') close(); });
    showChips = show;
    return [button, chipSlot];
  }

  // ---- the composer [G1.1–G1.5] ------------------------------------------------------------------

  /**
   * Quill owns Gemini's editor but reads the DOM back through a MutationObserver, so any change
   * counts, including a script setting innerText [G1.2] (docs/sites.md#input-fallbacks).
   */
  function renderComposer() {
    const editor = el('div', {
      class: 'ql-editor ql-blank', contenteditable: 'true', role: 'textbox',
      'aria-multiline': 'true', 'aria-label': TEXT.inputLabel, 'data-placeholder': TEXT.placeholder,
    }, el('p', {}, el('br')));
    let state = '';
    const sync = () => {
      state = readParagraphs(editor);
      editor.classList.toggle('ql-blank', !state);
      updateButtons();
    };
    new MutationObserver(sync).observe(editor, { childList: true, characterData: true, subtree: true });
    editor.addEventListener('input', sync);
    editor.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        submit();
      }
    });
    // The microphone: its aria-label is not documented, so it has none; only the icon name
    // (a mat-icon like the send button's) identifies it [G1.4].
    const mic = el('button', { type: 'button' },
      el('mat-icon', { 'data-mat-icon-name': 'mic', fonticon: 'mic' }));
    // Send [G1.3], which is also Stop while answering [G1.5].
    const send = el('button', { type: 'button', class: 'send-button' },
      el('span', { class: 'mat-mdc-button-touch-target' }),
      el('mat-icon', { 'data-mat-icon-name': 'send', fonticon: 'send' }));
    send.addEventListener('click', () => {
      if (generation) stop();
      else submit();
    });
    const slot = el('div', {});
    composer = {
      editor, send, mic, slot,
      get text() { return state; },
      clear() { editor.replaceChildren(el('p', {}, el('br'))); sync(); },
    };
    root.append(el('div', {}, ...uploadControls(), ...toolsDrawer(), previews,
      el('rich-textarea', {}, editor), modePicker(), slot));
    updateButtons();
  }

  /** Mic and send swap in one place as the box fills [G1.4]; while answering the send
   * button is the stop button: class `stop`, "Stop response", the stop icon [G1.5]. */
  function updateButtons() {
    if (!composer) return;
    const { send, mic, slot } = composer;
    // A Deep Think placeholder reply looks finished [G10.2]: no stop button while it shows.
    const answering = generation !== null && !generation.placeholder;
    const icon = /** @type {HTMLElement} */ (send.querySelector('mat-icon'));
    send.classList.toggle('stop', answering);
    send.setAttribute('aria-label', answering ? TEXT.stop : TEXT.send);
    icon.setAttribute('data-mat-icon-name', answering ? 'stop' : 'send');
    icon.setAttribute('fonticon', answering ? 'stop' : 'send');
    const wanted = answering || composer.text.trim() ? send : mic;
    if (slot.firstChild !== wanted) slot.replaceChildren(wanted);
  }

  function submit() {
    if (!composer || generation) return;
    const text = composer.text.trim();
    if (!text) return;
    composer.clear();
    ask(text);
  }

  /** Stop. The real page POSTs batchexecute NkpXw and its stream still ends normally [G7.3];
   * the fake aborts its request, which ends the server's stream. */
  function stop() {
    // The stuck state (docs/sites.md#gemini-stuck): the UI has hung, so Stop does nothing.
    if (!generation || generation.stuck) return;
    generation.stopped = true;
    generation.xhr?.abort();
  }

  // ---- the StreamGenerate response [G7.1, G7.2, G5.5] -------------------------------------------

  /** @param {any} value @param {number[]} path @returns {any} value[path…], or undefined */
  function dig(value, path) {
    for (const key of path) {
      if (!Array.isArray(value)) return undefined;
      value = value[key];
    }
    return value;
  }

  /** @param {Generation} gen @param {any} frame */
  function onFrame(gen, frame) {
    if (!Array.isArray(frame)) return;
    for (const part of frame) {
      if (!Array.isArray(part) || part[0] !== 'wrb.fr') continue;
      const code = dig(part, [5, 2, 0, 1, 0]); // [G5.5]
      if (typeof code === 'number') {
        gen.errorCode = code;
        continue;
      }
      if (typeof part[2] !== 'string') continue;
      const inner = parse(part[2]);
      const ids = dig(inner, [1]);
      if (typeof ids?.[0] === 'string') gen.conversationId = ids[0].replace(/^c_/, '');
      if (typeof ids?.[1] === 'string') nameResponse(gen.message, ids[1]);
      const images = dig(inner, [4, 0, 12, 7, 0]); // generated images [G12.6]
      if (Array.isArray(images) && images.length) gen.images = images;
      const text = dig(inner, [4, 0, 1, 0]); // the whole text so far [G7.2]
      if (typeof text === 'string' && text) showAnswer(gen, text); // latest non-empty wins
    }
  }

  /**
   * The text so far. Deep Think's placeholder reply [G10.2] is shown as if finished (footer
   * complete, no stop button); the answer after it takes that back and streams as usual.
   * @param {Generation} gen @param {string} text
   */
  function showAnswer(gen, text) {
    if (text === gen.latest) return;
    gen.latest = text;
    if (gen.deepThink && text === config.deepThinkPlaceholder) {
      gen.placeholder = true;
      gen.view.update(text);
      gen.view.settled().then(() => {
        if (!gen.placeholder) return;
        complete(gen.footer, gen.content);
        updateButtons();
      });
      return;
    }
    if (gen.placeholder) {
      gen.placeholder = false;
      gen.footer.classList.remove('complete');
      gen.footer.replaceChildren();
      updateButtons();
    }
    gen.view.update(text);
  }

  /**
   * A rendering of the text is in: the spinner gives way to it, and the page reports.
   * @param {Generation} gen
   */
  function rendered(gen) {
    gen.content.querySelector('[role="progressbar"]')?.remove();
    gen.view.fill();
    const shownAt = nowEpoch();
    if (!gen.shown && !gen.placeholder && gen.view.hasText) {
      gen.shown = true;
      report(gen.questionId, 'first_token', shownAt);
      report(gen.questionId, 'text_visible', shownAt);
    }
    scrollToEnd();
  }

  /**
   * Send with XMLHttpRequest, read on its progress events [G7.1].
   * @param {Generation} gen @param {string} body @returns {Promise<number>} the HTTP status
   * (0 when aborted)
   */
  function stream(gen, body) {
    return new Promise((resolve) => {
      const xhr = new XMLHttpRequest();
      gen.xhr = xhr;
      const reader = new FrameReader();
      let read = 0;
      const consume = () => {
        if (xhr.status !== 200) return;
        const text = xhr.responseText;
        if (text.length <= read) return;
        const frames = reader.push(text.slice(read));
        read = text.length;
        for (const frame of frames) onFrame(gen, frame);
      };
      const params = new URLSearchParams({
        bl: 'boq_assistant-bard-web-server_fake', 'f.sid': '0', hl: config.locale,
        _reqid: String(++requestCount * 100000 + 1234), rt: 'c',
      });
      xhr.open('POST', `${STREAM_PATH}?${params}`);
      xhr.setRequestHeader('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
      xhr.setRequestHeader('x-same-domain', '1');
      // The model header [G7.1] carries an opaque id on the real site [G7.6]; the fake's
      // names its mode.
      xhr.setRequestHeader('x-goog-ext-525001261-jspb', JSON.stringify([1, null, null, null, `fake-${modeId}`]));
      // Deep Think on: the fake's own marker (no source documents the real wire flag).
      if (gen.deepThink) xhr.setRequestHeader('x-fake-deep-think', '1');
      // Deep Research on: the fake's own marker (the real flags of G11.2 are not modelled).
      if (gen.deepResearch) xhr.setRequestHeader('x-fake-deep-research', '1');
      xhr.addEventListener('readystatechange', () => {
        if (xhr.readyState === XMLHttpRequest.HEADERS_RECEIVED) {
          gen.questionId = xhr.getResponseHeader('x-fake-question-id') || '';
          gen.stuck = xhr.getResponseHeader('x-fake-state') === 'stuck'; // fake-only
          gen.rolledBack = xhr.getResponseHeader('x-fake-state') === 'rollback'; // fake-only
          gen.research = xhr.getResponseHeader('x-fake-research') || ''; // fake-only
        }
      });
      xhr.addEventListener('progress', consume);
      xhr.addEventListener('load', consume);
      xhr.addEventListener('loadend', () => resolve(xhr.status));
      xhr.send(body);
    });
  }

  // ---- asking -----------------------------------------------------------------------------------

  /** @param {string} text */
  async function ask(text) {
    const exchange = addExchange(text);
    // The no_request state (fake-only, docs/sites.md#facts-without-evidence): the user-query
    // shows, the StreamGenerate XHR [G7.1] is never made, nothing answers.
    if (config.noRequest) return;
    const sentAt = performance.now();
    const { response, content, message, footer, view } = addResponse(exchange);
    /** @type {Generation} */
    const gen = {
      text, xhr: null, questionId: '', stuck: false, stopped: false, finished: false,
      response, content, message, footer, view, conversationId: null, latest: '',
      errorCode: null, shown: false, deepThink, placeholder: false, rolledBack: false,
      images: [],
      deepResearch, research: '',
    };
    if (deepResearch) {
      deepResearch = false; // the chip goes with the question (the fake's reading)
      showChips();
    }
    view.onRender = () => rendered(gen);
    generation = gen;
    updateButtons();
    const request = [[text, 0, null, takeAttachments(), null, null, 0], [config.locale],
      [conversationId ? `c_${conversationId}` : '', '', '']];
    if (gemId) request[19] = gemId; // the Gem's id at index 19 [G9.2]
    if (temporary) request[45] = 1; // "won't be saved in Gemini history" [G13.2]
    const body = 'f.req=' + encodeURIComponent(JSON.stringify([null, JSON.stringify(request)])) +
      '&at=' + encodeURIComponent('fake-at-token');
    const status = await stream(gen, body);
    if (gen.rolledBack) {
      // "Rollback" [G14.2]: 1–2 s after Send the user-query vanishes, the prompt returns to
      // the editor, the URL stays; nothing is answered.
      setTimeout(() => takeBack(gen, exchange), Math.max(0, ROLLBACK_MS - (performance.now() - sentAt)));
      return;
    }
    if (gen.stopped) {
      // finish() adds the note
    } else if (status === 401) {
      generation = null;
      showSignIn();
    } else if (status === 429 || gen.errorCode === USAGE_LIMIT) {
      showAnswer(gen, TEXT.rateLimit);
    } else if (status !== 200 || (gen.errorCode !== null && !gen.latest)) {
      showAnswer(gen, TEXT.error); // errors are ordinary model replies [G5.4]
    }
    // The last rendering in before the final state: the reply is complete with its text.
    await gen.view.settled();
    // The image can show before "Stop response" goes [G12.2].
    if (!gen.stopped && gen.images.length) await showImages(gen);
    finish(gen);
    if (gen.research === 'plan' && !gen.stopped) researchPlan(gen);
  }

  // ---- Deep Research [G11.3–G11.6] ---------------------------------------------------------

  /**
   * The plan's `deep-research-confirmation-widget` with its `[data-test-id="title"]` and
   * `[data-test-id="confirm-button"]` "Start research" [G11.3]. Started (the fake's own
   * request), the reply shows `deep-research-processing-indicator` [G11.4]; done, the chat
   * keeps "I've completed your research" and an `immersive-entry-chip`, the report opens in
   * `immersive-panel > deep-research-immersive-panel` (title `h2.title-text`, body
   * `message-content .markdown`, used sources `.source-list.used-sources browse-web-item
   * a[data-test-id="browse-web-item-link"]`) and `[data-test-id="export-menu-button"]` shows
   * [G11.5, G11.6]. The widget's and panel's wrappers are the fake's own.
   * @param {Generation} gen
   */
  function researchPlan(gen) {
    const questionId = gen.questionId;
    const confirm = el('button', { type: 'button', 'data-test-id': 'confirm-button' },
      TEXT.startResearch);
    const widget = el('deep-research-confirmation-widget', {},
      el('div', { 'data-test-id': 'title' }, TEXT.researchPlan), confirm);
    gen.content.append(widget);
    confirm.addEventListener('click', async () => {
      widget.replaceWith(el('deep-research-processing-indicator', {}, TEXT.researching));
      await fetch('/__fake/research/start', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question_id: questionId }),
      }).catch(() => {});
      /** @type {any} */
      let done = null;
      for (;;) {
        done = await fetch(`/__fake/research/${encodeURIComponent(questionId)}?timeout_ms=30000`)
          .then((r) => r.json()).catch(() => null);
        if (!done) return;
        if (done.done) break;
      }
      gen.content.querySelector('deep-research-processing-indicator')?.remove();
      gen.content.append(el('div', {}, TEXT.researchDone), el('immersive-entry-chip', {},
        el('div', { class: 'card-title' }, TEXT.researchPlan)));
      const body = el('div', { class: 'markdown markdown-main-panel' });
      const view = new MarkdownView(body, FLAVOR, (v) => v.fill());
      view.update(String(done.markdown || ''));
      await view.settled();
      const sources = (Array.isArray(done.sources) ? done.sources : []).map((/** @type {any} */ s) =>
        el('browse-web-item', {}, el('a', {
          'data-test-id': 'browse-web-item-link', href: String(s.url), target: '_blank',
        }, el('span', { 'data-test-id': 'sub-title' }, String(s.title)))));
      document.body.append(el('immersive-panel', {}, el('deep-research-immersive-panel', {},
        el('div', {}, el('h2', { class: 'title-text' }, TEXT.researchPlan),
          el('button', { type: 'button', 'data-test-id': 'export-menu-button',
            'aria-label': TEXT.exportMenu }, svgIcon())),
        el('message-content', {}, body),
        el('div', { class: 'source-list used-sources' }, ...sources))));
    });
  }

  /**
   * Generated images [G12.3]: `div.attachment-container.generated-images > generated-image >
   * single-image.generated-image > img.image.animate`, `loaded` once loaded, its src a
   * `blob:` URL of the preview the page fetched itself (`…=s1024-rj?alr=yes`) and revoked
   * once loaded [G12.4]; hover controls `div.generated-image-controls >
   * download-generated-image-button > button[data-test-id="download-generated-image-button"]`
   * ("Download full size image"), whose click fetches the original `=s0-d` [G12.4, G12.5].
   * @param {Generation} gen
   */
  async function showImages(gen) {
    const container = el('div', { class: 'attachment-container generated-images' });
    for (const image of gen.images) {
      const url = String(dig(image, [0, 3, 3]) || '');
      const alt = String(dig(image, [0, 3, 2]) || '');
      if (!url) continue;
      let src = '';
      try {
        const response = await fetch(`${url}?alr=yes`, { credentials: 'include' });
        src = URL.createObjectURL(await response.blob());
      } catch (error) {
        continue;
      }
      const img = /** @type {HTMLImageElement} */ (el('img', { class: 'image animate', alt, src }));
      const loaded = new Promise((resolve) => {
        img.addEventListener('load', () => {
          img.classList.add('loaded');
          URL.revokeObjectURL(src);
          resolve(null);
        }, { once: true });
        img.addEventListener('error', () => resolve(null), { once: true });
      });
      const download = el('button', {
        type: 'button', 'data-test-id': 'download-generated-image-button',
        'aria-label': TEXT.downloadImage,
      }, svgIcon());
      download.addEventListener('click', () => {
        fetch(url.replace(/=[^=/]*$/, '=s0-d'), { credentials: 'include' }).catch(() => {});
      });
      container.append(el('generated-image', {},
        el('single-image', { class: 'generated-image' }, img,
          el('div', { class: 'generated-image-controls' },
            el('download-generated-image-button', {}, download)))));
      gen.content.append(container);
      await loaded;
    }
  }

  const ROLLBACK_MS = 1000;

  /** The server refused the question [G14.2]: its exchange goes, its text is back in the
   * editor, the composer is idle again. @param {Generation} gen @param {HTMLElement} exchange */
  function takeBack(gen, exchange) {
    exchange.remove();
    if (generation === gen) generation = null;
    if (composer) {
      composer.editor.replaceChildren(...gen.text.split('\n').map((line) => el('p', {}, line || el('br'))));
    }
    updateButtons();
  }

  /** The final state: the footer complete, Stop back to mic or Send, then report. */
  function finish(gen) {
    if (gen.finished) return;
    gen.finished = true;
    if (generation === gen) generation = null;
    if (gen.stopped) gen.content.append(el('div', {}, TEXT.stopped)); // [G3.6]
    complete(gen.footer, gen.content);
    if (gen.conversationId && gen.conversationId !== conversationId) {
      conversationId = gen.conversationId;
      // [G6.2]; inside a Gem /gem/<gem id>/<chat id> [G9.1]. Whether a temporary chat's URL
      // changes is undocumented: the fake's stays.
      if (!temporary) {
        window.history.pushState(null, '', gemId ? `/gem/${gemId}/${conversationId}`
          : `/app/${conversationId}`);
      }
    }
    updateButtons();
    report(gen.questionId, 'complete', nowEpoch(), gen.stopped);
    if (gen.conversationId) loadRecent(); // a new or continued chat moves to the top
  }

  // ---- page states ------------------------------------------------------------------------------

  /** Signed out: no composer, a visible "Sign in" link to accounts.google.com [G5.1]. */
  function showSignIn() {
    root.replaceChildren(el('a', {
      href: 'https://accounts.google.com/ServiceLogin?continue=https://gemini.google.com/app',
    }, TEXT.signIn));
    composer = null;
    scroller = null;
  }

  /** Earlier turns of /app/<id>, from the batchexecute RPC hNvQHb [G7.4]. @param {string} id */
  async function loadConversation(id) {
    const request = [[['hNvQHb', JSON.stringify([`c_${id}`, 10]), null, 'generic']]];
    const reply = await fetch('/_/BardChatUi/data/batchexecute?rpcids=hNvQHb&rt=c', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
      body: 'f.req=' + encodeURIComponent(JSON.stringify(request)),
    });
    if (!reply.ok) {
      chatHistory().append(el('p', {}, TEXT.notFound));
      return;
    }
    /** @type {any[][]} */
    const turns = [];
    for (const frame of new FrameReader().push(await reply.text() + '\n')) {
      for (const part of Array.isArray(frame) ? frame : []) {
        if (!Array.isArray(part) || part[0] !== 'wrb.fr' || typeof part[2] !== 'string') continue;
        const found = parse(part[2]);
        for (const turn of Array.isArray(found) ? found : []) {
          if (Array.isArray(turn) && typeof turn[0] === 'string') turns.push(turn);
        }
      }
    }
    // Rendered before any exchange is shown, so the conversation appears whole, at once.
    const renderings = await Promise.all(turns.map((turn) =>
      typeof turn[1] === 'string' ? renderMarkdown(turn[1], FLAVOR) : []));
    /** @type {string[][]} a finished research's messages after its plan (fourth element) */
    const laterTexts = turns.map((turn) =>
      (Array.isArray(turn[3]) ? turn[3].filter((t) => typeof t === 'string') : []));
    const laterRenderings = await Promise.all(laterTexts.map((texts) =>
      Promise.all(texts.map((text) => renderMarkdown(text, FLAVOR)))));
    turns.forEach((turn, index) => {
      const exchange = addExchange(turn[0]);
      if (typeof turn[1] !== 'string') return;
      const { content, message, footer, view } = addResponse(exchange);
      nameResponse(message, hexId());
      content.querySelector('[role="progressbar"]')?.remove();
      view.show(turn[1], renderings[index]);
      // A finished research reopened [G11.6]: its completion notice and its report follow
      // the plan as message-contents of their own (message-content[1], [2]), and no panel
      // opens. That they sit in the plan's response is the fake's own choice.
      laterTexts[index].forEach((text, at) => {
        const markdown = el('div', { class: 'markdown' });
        content.append(el('message-content', { class: 'model-response-text' }, markdown));
        new MarkdownView(markdown, FLAVOR, (v) => v.fill()).show(text, laterRenderings[index][at]);
      });
      // An answer the server is still writing comes with a third element, false: it has
      // no finished footer yet (how the real site shows one is not documented).
      if (turn[2] !== false) complete(footer, content);
    });
    virtualize();
  }

  /**
   * The temporary-chat button in the header [G13.1]: `temp-chat-button` holding
   * `button[data-test-id="temp-chat-button"]` with aria-label "Temporary chat"; on, the button
   * has class `temp-chat-on`. Absent with `Behaviour(temporary_chat=False)` (the fake's own
   * stand-in for an account without it).
   */
  function renderTempChatButton() {
    const header = el('div', {});
    root.prepend(header);
    // The side nav's menu button [G13.1, MTC]: while the nav is collapsed the temporary-chat
    // button is removed from the DOM; expanding the nav brings it back.
    const menu = el('button', {
      type: 'button', 'data-test-id': 'side-nav-menu-button', 'aria-label': 'Main menu',
    });
    let expanded = !config.sideNavCollapsed;
    header.append(menu);
    if (config.temporaryChat === false) return;
    const button = el('button', {
      type: 'button', 'data-test-id': 'temp-chat-button', 'aria-label': 'Temporary chat',
    });
    button.classList.toggle('temp-chat-on', temporary);
    button.addEventListener('click', () => {
      temporary = !temporary;
      button.classList.toggle('temp-chat-on', temporary);
    });
    const holder = el('temp-chat-button', {}, button);
    if (expanded) header.append(holder);
    menu.addEventListener('click', () => {
      expanded = !expanded;
      if (expanded) header.append(holder);
      else holder.remove();
    });
  }

  function hydrate() {
    renderTempChatButton();
    chatHistory();
    renderComposer();
    loadRecent();
    if (conversationId) loadConversation(conversationId);
  }

  if (config.loggedOut) {
    showSignIn();
  } else if (config.hydrationMs > 0) {
    // The real app's input appears only once its bundles have loaded and bootstrapped.
    setTimeout(hydrate, config.hydrationMs);
  } else {
    hydrate();
  }
})();
