// @ts-check
// The fake chatgpt.com page: the DOM bridge's ChatGPT driver works against (docs/sites.md#chatgpt,
// docs/sites.md#input-fallbacks, docs/sites.md#send-fallbacks, docs/flows.md#known-problems), fed
// by the server-sent event stream of POST /backend-api/f/conversation. Every structure cites its
// row of the site-facts compilation (SITE-FACTS, e.g. [C1.5]); what no source shows is kept to
// plain elements without class names or test ids, and its texts are marked "unevidenced".
'use strict';

(() => {
  const { el, svgIcon, nowEpoch, report, copyText, MarkdownView, renderMarkdown, textChunks,
    readParagraphs, isObject, DeltaDocument } = FakeKit;
  const config = FakeKit.config();

  const EN = {
    placeholder: 'Ask anything', // unevidenced
    send: 'Send prompt', // [C1.5]
    stop: 'Stop answering', // [C1.8] (AIH, 2026-09-30)
    speech: 'Start Voice', // [C1.10]
    dictate: 'Dictate button', // [C1.10]
    dictating: 'Stop dictation', // [C1.12]: a "stop" label that is not the answer's stop
    youSaid: 'You said:', // [C2.5]
    assistantSaid: 'ChatGPT said:', // [C2.5]
    thinking: 'Thinking', // [C4.1]
    skip: 'Answer now', // [C4.4]
    /** @param {number} s */
    thought: (s) => `Thought for ${s}s`, // [C4.2]
    stoppedThinking: 'Stopped thinking', // [C3.6]
    error: 'Something went wrong while generating the response. If this issue persists please ' +
      'contact us through our help center at help.openai.com.', // [C5.8]
    retry: 'Retry', // [C5.8] "Retry/Regenerate button"
    rateLimit: "You've reached our limit of messages per hour. Please try again later.", // [C5.7]
    gotIt: 'Got it', // [C5.7]
    copy: 'Copy', // [C2.6]
    good: 'Good response', // [C2.6]
    bad: 'Bad response', // [C2.6]
    readAloud: 'Read aloud', // [C2.6]
    readingAloud: 'Stop reading aloud', // unevidenced wording; "stop" + "read" per [C1.12]
    copyCode: 'Copy code', // unevidenced (the brief's code-block header)
    login: 'Log in', // [C5.1]
    signup: 'Sign up for free', // [C5.1]
    newChat: 'New chat', // unevidenced
    notFound: 'Unable to load conversation', // unevidenced
    addFiles: 'Add files', // unevidenced (the composer "+" [C1.13])
    removeFile: 'Remove file', // [C8.3] "Remove file" on an attachment chip
    deepResearch: 'Deep research', // [C9.1] the "+" menu item, [C9.2] its composer pill
    removeResearch: 'Deep research, click to remove', // unevidenced wording (CAB's JP [C9.2])
    addPhotos: 'Add photos & files', // unevidenced (the "+" menu's upload item)
    researchStart: 'Start', // [C9.6] PDX finds the plan's button by the text "start"
    startsIn: (/** @type {number} */ s) => `Starting in ${s}s`, // unevidenced countdown text
    researching: 'Researching', // [C9.7] a status-only running text
    researchFrame: 'Deep research', // [C9.8] iframe[title*="deep research" i]
  };
  /** @type {typeof EN} */
  const JA = {
    ...EN,
    placeholder: '質問してみましょう', // unevidenced
    send: 'プロンプトを送信する', // unevidenced
    stop: 'ストリーミングの停止', // [C1.8] (CAB)
    speech: '音声モードを開始する', // unevidenced
    dictate: '音声入力ボタン', // unevidenced
    dictating: '音声入力を停止する', // unevidenced
    youSaid: 'あなた:', // unevidenced (Spec only)
    assistantSaid: 'ChatGPT:', // unevidenced
    thinking: '思考中', // [C4.1]
    skip: '今すぐ回答', // [C4.4]
    thought: (s) => `思考時間: ${s}s`, // [C4.2]
    stoppedThinking: '思考を停止しました', // unevidenced
    error: '応答の生成中に問題が発生しました。この問題が解決しない場合は、help.openai.com の' +
      'ヘルプセンターからお問い合わせください。', // unevidenced
    retry: '再試行する', // unevidenced
    // Unevidenced: no Japanese limit text is documented [C5.7]. Detectors must not rely on
    // it; the HTTP 429 of the send request is the signal [C5.10].
    rateLimit: '1 時間あたりのメッセージの上限に達しました。しばらくしてからもう一度お試しください。',
    gotIt: 'OK', // unevidenced
    copy: 'コピーする', // unevidenced
    good: '良い回答', // unevidenced for ChatGPT (Gemini's JP label [G2.6])
    bad: '悪い回答', // unevidenced for ChatGPT
    readAloud: '読み上げる', // unevidenced
    readingAloud: '読み上げを停止する', // unevidenced
    copyCode: 'コードをコピーする', // unevidenced
    login: 'ログイン', // unevidenced
    signup: '無料でサインアップ', // unevidenced
    newChat: '新しいチャット', // unevidenced
    notFound: '会話を読み込めません', // unevidenced
    addFiles: 'ファイルの追加', // [C8.3] (CAB)
  };
  // German: only "Nutzungslimit" and "Erneut versuchen" are documented [C5.7, C5.8]; every
  // other label stays English rather than be invented.
  /** @type {typeof EN} */
  const DE = {
    ...EN,
    // Only the word "Nutzungslimit" is evidenced [C5.7]; the sentence around it is not.
    rateLimit: 'Du hast dein Nutzungslimit erreicht. Bitte versuche es später erneut.',
    retry: 'Erneut versuchen', // [C5.8]
  };
  const TEXT = config.locale === 'ja' ? JA : config.locale === 'de' ? DE : EN;
  // The modes of the picker [C8.1, C8.2]: slugs as the per-model test ids show them
  // (model-switcher-gpt-5-5-thinking, model-switcher-gpt-5-5-instant) and `?model=auto` [C6.3];
  // the labels are unevidenced.
  const MODES = [
    { slug: 'auto', label: 'Auto' },
    { slug: 'gpt-5-5-instant', label: 'Instant' },
    { slug: 'gpt-5-5-thinking', label: 'Thinking' },
    { slug: 'gpt-5-5-pro', label: 'Pro' },
  ];
  // The thinking-effort tiers of the Intelligence picker's "Effort" submenu, in the current
  // English names [C13.2, C13.3] (Instant, Medium, High, Extra High, Pro: the slider's five
  // positions), each with the model and the send body's `thinking_effort` [C13.6: U106 maps
  // medium→standard, high→extended, extra-high→max on the thinking model; Pro is the pro model
  // with `extended`]. Instant sends no `thinking_effort` (the fake's reading: an instant model).
  const TIERS = [
    { label: 'Instant', model: 'gpt-5-5-instant', effort: null },
    { label: 'Medium', model: 'gpt-5-5-thinking', effort: 'standard' },
    { label: 'High', model: 'gpt-5-5-thinking', effort: 'extended' },
    { label: 'Extra High', model: 'gpt-5-5-thinking', effort: 'max' },
    { label: 'Pro', model: 'gpt-5-5-pro', effort: 'extended' },
  ];
  /** The tier chosen in the Effort submenu; null until one is (a mode from the list resets it). */
  /** @type {typeof TIERS[number]|null} */
  let tier = null;
  /** `?model=<slug>` pre-selects a model [C6.3]; the picker changes it. */
  let modeSlug = (() => {
    const asked = new URLSearchParams(location.search).get('model');
    return MODES.some((m) => m.slug === asked) ? /** @type {string} */ (asked) : 'auto';
  })();

  const shell = el('div', {});
  document.body.prepend(shell);
  const thread = el('div', {});
  const bottom = el('div', { id: 'thread-bottom-container' }); // [C1.14]
  /** @type {string|null} */
  let conversationId =
    (/^(?:\/g\/[^/]+)?\/c\/([^/]+)/.exec(location.pathname) || [])[1] || null;
  // Inside a project (/g/g-p-<32 hex>-<slug>/…) or a custom GPT (/g/g-<id>-<slug>/…) [C12.1]
  // the page asks with that gizmo [C12.2] and its chats live under the same prefix.
  const gizmoMatch = /^\/g\/((g-p-[0-9a-f]{32}|g-[A-Za-z0-9]+)[^/]*)/.exec(location.pathname);
  const gizmoPrefix = gizmoMatch ? `/g/${gizmoMatch[1]}` : '';
  const gizmoId = gizmoMatch ? gizmoMatch[2] : '';
  // A temporary chat [C6.3]: /?temporary-chat=true, and its id never reaches the URL.
  const temporary = new URLSearchParams(location.search).get('temporary-chat') === 'true';
  let turnCount = 0;

  /**
   * @typedef {{element: HTMLElement, readonly text: string, clear(): void}} Input
   * @typedef {{input: Input, submit: HTMLButtonElement, speech: HTMLElement,
   *            slot: HTMLElement}} Composer
   * @typedef {{text: string, phase: 'waiting'|'thinking'|'answering', abort: AbortController,
   *            questionId: string, conversationId: string|null, stopped: boolean,
   *            finished: boolean, turn: HTMLElement|null, message: HTMLElement|null,
   *            body: HTMLElement|null, view: InstanceType<typeof MarkdownView>|null,
   *            markdown: string, status: HTMLElement|null, failed: boolean,
   *            firstReported: boolean, visibleReported: boolean, answered: boolean,
   *            skeleton: HTMLElement|null}} Generation
   */
  /** @type {Composer|null} */
  let composer = null;
  /** @type {Generation|null} */
  let generation = null;

  // ---- the background-tab quirk (docs/sites.md#background-tab) ---------------------------------
  // Measured in headless Chromium 156: a tab that is not the active one reports
  // document.hidden === true and visibilityState 'hidden', and gets no animation frames.
  // Emulation.setFocusEmulationEnabled(true) makes it report 'visible' (firing visibilitychange,
  // then focus) and animation frames run again; activating it (Page.bringToFront,
  // Target.activateTarget) does the same. document.hasFocus() is no guide: CDP input
  // (Input.insertText) into a hidden tab makes it true while the tab stays hidden.
  // ChatGPT reveals streamed text from animation frames, so in a hidden tab its answer stays
  // <p data-start="0" data-end="N"></p> [C2.11]. The fake fills text at once while the page is
  // visible, else from an animation frame (which runs only once the page is visible again),
  // and also on visibilitychange/focus; every streaming step checks again.

  /** @type {Map<InstanceType<typeof MarkdownView>, () => void>} */
  const waitingForText = new Map();
  let frameRequested = false;

  function canRender() {
    return document.visibilityState === 'visible';
  }

  function fillWaitingText() {
    frameRequested = false;
    for (const [view, onFilled] of [...waitingForText]) {
      waitingForText.delete(view);
      if (view.fill()) onFilled();
    }
  }

  /** @param {InstanceType<typeof MarkdownView>} view @param {() => void} onFilled */
  function showText(view, onFilled) {
    waitingForText.set(view, onFilled);
    if (canRender()) {
      fillWaitingText();
    } else if (!frameRequested) {
      frameRequested = true;
      requestAnimationFrame(fillWaitingText);
    }
  }

  document.addEventListener('visibilitychange', () => { if (canRender()) fillWaitingText(); });
  window.addEventListener('focus', () => { if (canRender()) fillWaitingText(); });

  /** @type {{site: 'chatgpt', copyCode: string}} */
  const FLAVOR = { site: 'chatgpt', copyCode: TEXT.copyCode };

  /**
   * @param {HTMLElement} container
   * @param {(view: InstanceType<typeof MarkdownView>) => void} [onRender]
   */
  const markdownView = (container, onRender) => new MarkdownView(container, FLAVOR, onRender);

  // ---- the composer ------------------------------------------------------------------------------

  /**
   * ProseMirror owns its document [C1.1]: the state changes only through edits the browser
   * makes (typing, Input.insertText, IME, execCommand), which arrive as trusted input events
   * [C1.3]. A script writing innerHTML/textContent, or dispatching its own input event, changes
   * the DOM but not the state, so no send button appears and sending would send nothing:
   * docs/flows.md#known-problem-2, "input not reflected".
   * @param {(text: string) => void} onChange @param {() => void} onEnter @returns {Input}
   */
  function proseMirrorInput(onChange, onEnter) {
    const element = el('div', {
      contenteditable: 'true', translate: 'no', class: 'ProseMirror', id: 'prompt-textarea',
      role: 'textbox', 'aria-multiline': 'true',
    });
    let state = '';
    // ProseMirror's placeholder convention; the text itself is unevidenced.
    const renderEmpty = () => {
      element.replaceChildren(el('p', { class: 'placeholder', 'data-placeholder': TEXT.placeholder },
        el('br', { class: 'ProseMirror-trailingBreak' })));
    };
    renderEmpty();
    element.addEventListener('input', (event) => {
      if (!event.isTrusted) return;
      state = readParagraphs(element);
      const first = element.firstElementChild;
      if (!state && (element.childElementCount !== 1 || first?.nodeName !== 'P')) {
        renderEmpty();
        const selection = getSelection();
        selection?.collapse(element.firstChild, 0);
      } else if (first) {
        first.classList.toggle('placeholder', !state);
        first.setAttribute('data-placeholder', TEXT.placeholder);
      }
      onChange(state);
    });
    sendOnEnter(element, onEnter);
    return {
      element,
      get text() { return state; },
      clear() { state = ''; renderEmpty(); onChange(state); },
    };
  }

  /**
   * Enter sends, Shift+Enter and an IME composition's Enter do not (both composers).
   * @param {HTMLElement} element @param {() => void} onEnter
   */
  function sendOnEnter(element, onEnter) {
    element.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        onEnter();
      }
    });
  }

  /**
   * The older composer (docs/sites.md#chatgpt-composer, Spec §3.2): a React-controlled
   * textarea whose state follows every input event (React's onChange reads .value then),
   * trusted or not, but a bare `.value = ...` fires none and changes nothing [C1.3].
   * @param {(text: string) => void} onChange @param {() => void} onEnter @returns {Input}
   */
  function textareaInput(onChange, onEnter) {
    const element = /** @type {HTMLTextAreaElement} */ (el('textarea', {
      id: 'prompt-textarea', 'data-testid': 'prompt-textarea', rows: '1',
      placeholder: TEXT.placeholder,
    }));
    let state = '';
    element.addEventListener('input', () => { state = element.value; onChange(state); });
    sendOnEnter(element, onEnter);
    return {
      element,
      get text() { return state; },
      clear() { state = ''; element.value = ''; onChange(state); },
    };
  }

  // ---- attachments [C1.13, C8.3] ----------------------------------------------------------------
  // The composer "+" [C1.13] acts on trusted clicks only (synthetic ones are ignored: drivers
  // use a CDP click) and opens the file chooser of the form's file input that has no accept
  // filter; a second input takes images only [C8.3]. Whether the real "+" opens the chooser at
  // once or a menu first is not documented: this one opens the chooser. A chosen file shows a
  // chip at once (a data-testid with "attachment", a "Remove file <name>" button [C8.3]). How
  // the real chip shows its progress is not documented, so this one shows none: a driver must
  // tell the upload's end by behaviour (its request ending). Send stays disabled until every
  // upload has finished (unevidenced). The chip's markup beyond that is the fake's.

  /** @typedef {{file: File, chip: HTMLElement, id: string, done: boolean}} Staged */
  /** @type {Staged[]} */
  const staged = [];
  const chips = el('div', {});
  const uploading = () => staged.some((s) => !s.done);

  /** @param {File} file */
  function stage(file) {
    const remove = el('button', { type: 'button', 'aria-label': `${TEXT.removeFile} ${file.name}` },
      '×');
    const chip = el('div', { 'data-testid': 'composer-attachment' },
      el('span', {}, file.name), remove);
    /** @type {Staged} */
    const item = { file, chip, id: '', done: false };
    const drop = () => {
      const index = staged.indexOf(item);
      if (index >= 0) staged.splice(index, 1);
      chip.remove();
      updateButtons();
    };
    remove.addEventListener('click', drop);
    staged.push(item);
    chips.append(chip);
    updateButtons();
    FakeKit.uploadFile(file).then((stored) => {
      item.id = stored.id;
      item.done = true;
      updateButtons();
    }, drop);
  }

  /** The uploaded files go with the question (the fake's own request shape), and leave the
   * composer. */
  function takeAttachments() {
    const sent = staged.filter((s) => s.done).map((s) => ({
      id: s.id, name: s.file.name, size: s.file.size, mime_type: s.file.type,
    }));
    staged.length = 0;
    chips.replaceChildren();
    return sent;
  }

  function attachmentControls() {
    const generic = /** @type {HTMLInputElement} */ (el('input', {
      type: 'file', multiple: true, class: 'sr-only', tabindex: '-1',
    }));
    const images = /** @type {HTMLInputElement} */ (el('input', {
      type: 'file', multiple: true, accept: 'image/*', class: 'sr-only', tabindex: '-1',
    }));
    for (const input of [generic, images]) {
      input.addEventListener('change', () => {
        for (const file of Array.from(input.files || [])) stage(file);
      });
    }
    const plus = el('button', {
      type: 'button', id: 'composer-plus-btn', 'data-testid': 'composer-plus-btn',
      'aria-label': TEXT.addFiles,
    }, '+');
    plus.addEventListener('click', (event) => {
      if (!event.isTrusted) return; // [C1.13] synthetic clicks are ignored
      if (config.research === 'absent') generic.click();
      else toggleToolsMenu(plus, generic);
    });
    return { plus, inputs: [generic, images] };
  }

  // ---- Deep Research (docs/sites.md#research) ----------------------------------------------
  // With Behaviour.research offered/disabled the "+" opens a menu [C9.1]: a popover
  // `[data-radix-popper-content-wrapper]` holding `[role="menu"]` with a `[role="menuitemradio"]`
  // "Deep research" (CAB 2025-10) beside the fake's own upload item. Choosing it (a trusted
  // click, C9.1) arms the composer: a `button.__composer-pill` "Deep research" [C9.2 (a)],
  // removed by a click on it; the next send carries the connector hint [C9.3] and disarms it.

  let researchArmed = false;
  /** @type {HTMLElement|null} */
  let toolsMenu = null;
  const researchSlot = el('div', {});

  function closeToolsMenu() {
    toolsMenu?.remove();
    toolsMenu = null;
  }

  /** @param {HTMLElement} plus @param {HTMLInputElement} generic */
  function toggleToolsMenu(plus, generic) {
    if (toolsMenu) return closeToolsMenu();
    const upload = el('div', { role: 'menuitem', tabindex: '-1' }, TEXT.addPhotos);
    upload.addEventListener('click', () => { closeToolsMenu(); generic.click(); });
    const research = el('div', {
      role: 'menuitemradio', tabindex: '-1', 'aria-checked': String(researchArmed),
      'aria-disabled': config.research === 'disabled' ? 'true' : null,
    }, TEXT.deepResearch);
    research.addEventListener('click', (event) => {
      if (!event.isTrusted || config.research === 'disabled') return;
      closeToolsMenu();
      setResearch(true);
    });
    toolsMenu = el('div', { 'data-radix-popper-content-wrapper': '' },
      el('div', { role: 'menu' }, upload, research));
    const r = plus.getBoundingClientRect();
    toolsMenu.style.position = 'fixed';
    toolsMenu.style.left = `${r.left}px`;
    document.body.append(toolsMenu);
    // Above the "+", inside the viewport.
    const height = toolsMenu.getBoundingClientRect().height;
    const top = Math.max(4, Math.min(r.top - height - 4, window.innerHeight - height - 4));
    toolsMenu.style.top = `${top}px`;
    toolsMenu.style.zIndex = '50';
  }

  /** @param {boolean} on */
  function setResearch(on) {
    researchArmed = on;
    if (!on) return researchSlot.replaceChildren();
    const pill = el('button', {
      type: 'button', class: '__composer-pill', 'aria-label': TEXT.removeResearch,
    }, TEXT.deepResearch);
    pill.addEventListener('click', () => setResearch(false));
    researchSlot.replaceChildren(pill);
  }
  document.addEventListener('keydown', (event) => { if (event.key === 'Escape') closeToolsMenu(); });

  /**
   * The model picker [C8.1], as the unified "Intelligence" picker [C13.2]: the composer pill
   * `button.__composer-pill[aria-haspopup="menu"]` showing the current mode (or, once one is
   * chosen, the effort tier, as BTW saw the pill say "High", "Medium" [C13.3]) opens
   * `[role="menu"][data-radix-collection-root][data-testid="composer-intelligence-picker-content"]`
   * holding the `[role="menuitemradio"]` items `data-testid="model-switcher-<slug>"` with
   * `aria-checked` [C8.2], the Pro trigger
   * `[data-testid="composer-intelligence-pro-thinking-effort-trigger"]` and an "Advanced"
   * `[role="menuitem"]` that reveals the submenu openers "Model" and "Effort"
   * (`[role="menuitem"][aria-haspopup="menu"]`, the Effort label followed by the current tier:
   * "EffortHigh") [C13.2]. "Effort" (and the Pro trigger) open a second `[role="menu"]` of
   * `[role="menuitemradio"]` tier rows with `aria-checked` [C13.4]; the behaviour's
   * `effortDisabled` tier is `aria-disabled="true"` with a row-owned notice through
   * `aria-describedby` [C13.5]. A choice closes every menu; Escape or a second click on the
   * pill closes them too. With `modeSticks` false a choice does not hold.
   */
  function modePicker() {
    const labelOf = () => tier ? tier.label : (MODES.find((m) => m.slug === modeSlug) || MODES[0]).label;
    const pill = el('button', {
      type: 'button', class: '__composer-pill', 'aria-haspopup': 'menu', 'aria-expanded': 'false',
    }, labelOf());
    /** @type {HTMLElement|null} */
    let menu = null;
    /** @type {HTMLElement|null} */
    let submenu = null;
    const close = () => {
      submenu?.remove();
      submenu = null;
      if (!menu) return;
      menu.remove();
      menu = null;
      pill.setAttribute('aria-expanded', 'false');
    };
    /** @param {HTMLElement} box @param {HTMLElement} anchor */
    const place = (box, anchor) => {
      const r = anchor.getBoundingClientRect();
      box.style.left = `${r.right + 4}px`;
      box.style.bottom = `${Math.max(4, window.innerHeight - r.bottom)}px`; // grows upwards
      document.body.append(box);
    };
    /** @param {HTMLElement} anchor */
    const openEffort = (anchor) => {
      submenu?.remove();
      const notices = [];
      submenu = el('div', { role: 'menu', 'data-radix-collection-root': '', class: 'mode-menu' },
        ...TIERS.map((t, i) => {
          const disabled = config.effortDisabled && t.label === config.effortDisabled;
          const row = el('div', {
            role: 'menuitemradio', 'aria-checked': String(tier === t), tabindex: '-1',
          }, t.label);
          if (disabled) {
            // [C13.5] the notice's wording is unevidenced; the reset time is its point.
            const id = `effort-notice-${i}`;
            row.setAttribute('aria-disabled', 'true');
            row.setAttribute('aria-describedby', id);
            notices.push(el('div', { id, role: 'tooltip', class: 'effort-notice' },
              `You've reached your ${t.label} limit. It resets at 5:00 PM.`));
          }
          row.addEventListener('click', () => {
            if (disabled) return;
            if (config.modeSticks !== false) {
              tier = t;
              modeSlug = t.model;
            }
            pill.textContent = labelOf();
            close();
          });
          return row;
        }), ...notices);
      place(submenu, anchor);
    };
    const open = () => {
      const proTrigger = el('div', {
        role: 'menuitem', tabindex: '-1', 'aria-haspopup': 'menu',
        'data-testid': 'composer-intelligence-pro-thinking-effort-trigger',
      }, 'Pro');
      proTrigger.addEventListener('click', () => openEffort(proTrigger));
      const advanced = el('div', { role: 'menuitem', tabindex: '-1' }, 'Advanced');
      const advancedView = el('div', { 'data-testid': 'composer-model-picker-slider-advanced-view' });
      advanced.addEventListener('click', () => {
        const model = el('div', { role: 'menuitem', 'aria-haspopup': 'menu', tabindex: '-1' },
          el('span', {}, 'Model'), el('span', {}, (MODES.find((m) => m.slug === modeSlug) || MODES[0]).label));
        const effort = el('div', { role: 'menuitem', 'aria-haspopup': 'menu', tabindex: '-1' },
          el('span', {}, 'Effort'), el('span', {}, tier ? tier.label : ''));
        effort.addEventListener('click', () => openEffort(effort));
        advancedView.replaceChildren(model, effort);
      });
      menu = el('div', {
        role: 'menu', 'data-radix-collection-root': '', class: 'mode-menu',
        'data-testid': 'composer-intelligence-picker-content',
      },
        ...MODES.map((m) => {
          const item = el('div', {
            role: 'menuitemradio', 'data-testid': `model-switcher-${m.slug}`,
            'aria-checked': String(m.slug === modeSlug), tabindex: '-1',
          }, m.label);
          item.addEventListener('click', () => {
            if (config.modeSticks !== false) {
              modeSlug = m.slug;
              tier = null;
            }
            pill.textContent = labelOf();
            close();
          });
          return item;
        }), proTrigger, advanced, advancedView);
      const r = pill.getBoundingClientRect();
      menu.style.left = `${r.left}px`;
      menu.style.bottom = `${window.innerHeight - r.top + 4}px`;
      document.body.append(menu);
      pill.setAttribute('aria-expanded', 'true');
    };
    pill.addEventListener('click', () => (menu ? close() : open()));
    document.addEventListener('keydown', (event) => { if (event.key === 'Escape') close(); });
    return pill;
  }

  function renderComposer() {
    const makeInput = config.inputKind === 'textarea' ? textareaInput : proseMirrorInput;
    const input = makeInput(updateButtons, submit);
    // The hidden fallback textarea beside the editor [C1.2]: typing into it does nothing,
    // which is the pitfall of a plain `textarea` selector (CG-6).
    const fallback = config.inputKind === 'textarea' ? null : el('textarea', {
      name: 'prompt-textarea', class: 'wcDTda_fallbackTextarea', style: 'display: none',
      tabindex: '-1',
    });
    // One submit slot [C1.5, C1.7]: the same button swaps data-testid send-button ⇄
    // stop-button. With an empty composer it is not in the DOM: the voice-mode button sits
    // there instead [C1.10, C1.11].
    const submitButton = /** @type {HTMLButtonElement} */ (el('button', {
      type: 'button', id: 'composer-submit-button',
    }, svgIcon()));
    submitButton.addEventListener('click', () => {
      if (submitButton.getAttribute('data-testid') === 'stop-button') stop();
      else submit();
    });
    const speech = el('div', { 'data-testid': 'composer-speech-button-container' },
      el('button', {
        type: 'button', 'data-testid': 'composer-speech-button', 'aria-label': TEXT.speech,
        style: 'view-transition-name: var(--vt-composer-speech-button)',
      }, svgIcon()));
    // Dictation [C1.10]; while it listens its label says "Stop dictation" [C1.12], a "stop"
    // button in the form that is not the answer's stop button.
    const dictate = el('button', {
      type: 'button', class: 'composer-btn', 'aria-label': TEXT.dictate,
      'data-start-dictation': true,
    }, svgIcon());
    dictate.addEventListener('click', () => {
      const listening = dictate.getAttribute('aria-label') === TEXT.dictate;
      dictate.setAttribute('aria-label', listening ? TEXT.dictating : TEXT.dictate);
    });
    const slot = el('div', {});
    const attach = attachmentControls();
    const form = el('form', { 'data-type': 'unified-composer' }, // [C1.14]
      el('div', { id: 'composer-background' }, // [C1.14]
        attach.plus, modePicker(), researchSlot, chips, fallback, input.element,
        el('div', {}, dictate, slot)),
      ...attach.inputs);
    form.addEventListener('submit', (event) => { event.preventDefault(); submit(); });
    composer = { input, submit: submitButton, speech, slot };
    bottom.replaceChildren(form);
    updateButtons();
  }

  /** The submit slot's state: stop while a question is out, send while the composer holds
   * text (disabled while that is only whitespace [C1.6]), else the voice-mode button. */
  function updateButtons() {
    if (!composer) return;
    const { input, submit: button, speech, slot } = composer;
    if (generation !== null) {
      button.setAttribute('data-testid', 'stop-button');
      button.setAttribute('aria-label', TEXT.stop);
      button.disabled = false;
    } else if (input.text) {
      // Behaviour.send_markup 'submit': the slot's other test id in the evidence [C1.5: BLM].
      button.setAttribute('data-testid',
        config.sendMarkup === 'submit' ? 'composer-submit-button' : 'send-button');
      button.setAttribute('aria-label', TEXT.send);
      button.disabled = !input.text.trim() || uploading();
    }
    const wanted = generation !== null || input.text ? button : speech;
    if (slot.firstChild !== wanted) slot.replaceChildren(wanted);
  }

  function submit() {
    if (!composer || generation || uploading()) return;
    const text = composer.input.text.trim();
    if (!text) return;
    composer.input.clear();
    ask(text, false);
  }

  /** Stop [C7.6]. The real page POSTs /backend-api/stop_conversation and the stream may
   * still end normally; the fake aborts its request and reports the stop (finish), which ends
   * the server's answer (a request merely dropped does not). */
  function stop() {
    if (!generation) return;
    generation.stopped = true;
    generation.abort.abort();
  }

  // ---- turns ------------------------------------------------------------------------------------

  function scrollToEnd() {
    document.scrollingElement?.scrollTo(0, document.scrollingElement.scrollHeight);
  }

  // Turn wrappers [C2.1, C2.2]: `section` (the newer tag; `article` before 2025-12-26, so a
  // detector must not depend on it) with data-testid conversation-turn-N and data-turn; the
  // message inside with data-message-author-role and data-message-id [C2.3]; visually hidden
  // "You said:" / "ChatGPT said:" headings [C2.5]. No shadow DOM [C2.9].

  // The message's role attribute: `data-message-author-role` [C2.3], or with the "newest"
  // markup `data-message-role` [C2.10] (Behaviour.markup: a site change to absorb).
  const ROLE = config.markup === 'newest' ? 'data-message-role' : 'data-message-author-role';

  /** @param {string} text @param {string} [messageId] the read conversation's [C7.8] */
  function addUserTurn(text, messageId) {
    thread.append(el('section', {
      'data-turn': 'user', 'data-testid': `conversation-turn-${++turnCount}`, dir: 'auto',
    },
    el('h5', { class: 'sr-only' }, TEXT.youSaid),
    el('div', { [ROLE]: 'user', 'data-message-id': messageId || crypto.randomUUID() },
      el('div', { class: 'whitespace-pre-wrap' }, text))));
    scrollToEnd();
  }

  /** @param {string} messageId @returns {{turn: HTMLElement, message: HTMLElement}} */
  function addAssistantTurn(messageId) {
    const message = el('div', {
      [ROLE]: 'assistant', 'data-message-id': messageId,
      'data-message-model-slug': modeSlug, // [C2.3]
    });
    const turn = el('section', {
      'data-turn': 'assistant', 'data-testid': `conversation-turn-${++turnCount}`, dir: 'auto',
    }, el('h6', { class: 'sr-only' }, TEXT.assistantSaid), message);
    thread.append(turn);
    scrollToEnd();
    return { turn, message };
  }

  /** The answer's container [C2.4]: class list as seen on the site. */
  const markdownBody = () => el('div', { class: 'markdown prose wrap-break-word markdown-new-styling' });

  /**
   * The finished action bar [C2.6], only once a turn is complete. Copy puts the answer's
   * source markdown on the clipboard [C2.7]; "Read aloud" reads "Stop reading aloud" while
   * it plays [C1.12].
   * @param {() => string} markdown
   */
  function turnActions(markdown) {
    /** @param {string} testid @param {string} label */
    const button = (testid, label) =>
      el('button', { type: 'button', 'data-testid': testid, 'aria-label': label }, svgIcon());
    const copy = button('copy-turn-action-button', TEXT.copy);
    copy.addEventListener('click', () => copyText(markdown()));
    const read = button('voice-play-turn-action-button', TEXT.readAloud);
    read.addEventListener('click', () => {
      const playing = read.getAttribute('aria-label') === TEXT.readAloud;
      read.setAttribute('aria-label', playing ? TEXT.readingAloud : TEXT.readAloud);
    });
    return el('div', { class: 'turn-action-controls' }, copy,
      button('good-response-turn-action-button', TEXT.good),
      button('bad-response-turn-action-button', TEXT.bad), read);
  }

  /**
   * @param {string} markdown @param {string[]} blocks its rendering, made beforehand
   * @param {string} [messageId] the read conversation's [C7.8]
   */
  function addHistoryAnswer(markdown, blocks, messageId) {
    const { turn, message } = addAssistantTurn(messageId || crypto.randomUUID());
    const body = markdownBody();
    message.append(body);
    const view = markdownView(body);
    view.show(markdown, blocks);
    showText(view, () => {});
    sandboxButtons(body);
    turn.append(turnActions(() => markdown));
  }

  // ---- asking -----------------------------------------------------------------------------------

  /**
   * @param {string} text @param {boolean} retry
   * @param {boolean} [resume] follow the answer to the last question that the server is still
   * writing (a reopened conversation) instead of asking
   */
  async function ask(text, retry, resume = false) {
    if (!retry && !resume) addUserTurn(text);
    // The no_request state (fake-only, docs/sites.md#facts-without-evidence): the turn shows,
    // the page never makes its request [C14.3], nothing answers.
    if (config.noRequest) return;
    /** @type {Generation} */
    const gen = {
      text, phase: 'waiting', abort: new AbortController(), questionId: '',
      conversationId: null, stopped: false, finished: false, turn: null, message: null,
      body: null, view: null, markdown: '', status: null, failed: false,
      firstReported: false, visibleReported: false, answered: false, skeleton: null,
    };
    generation = gen;
    updateButtons();
    // The request body [C7.2]: conversation_id only for an existing conversation.
    /** @type {Record<string, any>} */
    const request = {
      action: retry ? 'variant' : 'next',
      messages: [{
        id: crypto.randomUUID(), author: { role: 'user' }, create_time: Date.now() / 1000,
        content: { content_type: 'text', parts: [text] }, metadata: {},
      }],
      parent_message_id: crypto.randomUUID(),
      model: modeSlug, // the fake's own field: the real body's model field is undocumented
      // [C12.2]: which assistant answers, a project's or GPT's gizmo or the primary one.
      conversation_mode: gizmoId
        ? { kind: 'gizmo_interaction', gizmo_id: gizmoId }
        : { kind: 'primary_assistant' },
    };
    // The chosen effort tier's `thinking_effort` [C13.6].
    if (tier && tier.effort) request.thinking_effort = tier.effort;
    // Deep Research armed: the connector hint [C9.3] (the `connector:` form of G2A/U89); the
    // pill goes with the question.
    if (researchArmed && !retry && !resume) {
      request.system_hints = ['connector:connector_openai_deep_research'];
      setResearch(false);
    }
    if (conversationId) request.conversation_id = conversationId;
    if (!retry) request.messages[0].metadata.attachments = takeAttachments();
    try {
      const path = resume ? '/backend-api/f/conversation/resume' : '/backend-api/f/conversation';
      const response = await fetch(path, { // [C7.1]
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(resume ? { conversation_id: conversationId } : request),
        signal: gen.abort.signal,
      });
      gen.questionId = response.headers.get('x-fake-question-id') || '';
      // A refusal's body is JSON ({detail}); the page reads it before saying anything.
      if (!response.ok) await response.text().catch(() => '');
      if (response.status === 401) {
        showLoginModal();
      } else if (response.status === 429) {
        showLimitDialog(); // [C5.10]
      } else if (!response.ok) {
        showError(gen);
      } else {
        await readStream(gen, response);
        if (response.headers.get('x-fake-research') === 'plan') researchPlan(gen, response);
      }
    } catch (error) {
      if (!gen.stopped) showError(gen);
    }
    // The last rendering in before the final state: the turn is complete with its text.
    await gen.view?.settled();
    finish(gen);
  }

  // ---- the v1 delta stream [C7.3, C7.4, C7.5] ----------------------------------------------------

  /** @param {Response} response @returns {AsyncGenerator<{event: string, data: string}>} */
  async function* serverEvents(response) {
    let buffer = '';
    for await (const piece of textChunks(response)) {
      // CRLF or CR line ends; a CR last in the buffer may be half of a CRLF still on its way.
      buffer = (buffer + piece).replace(/\r\n/g, '\n').replace(/\r(?!$)/g, '\n');
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const raw = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = 'message';
        const data = [];
        for (const line of raw.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
        }
        if (data.length) yield { event, data: data.join('\n') };
      }
    }
  }

  /** @param {Generation} gen @param {Response} response */
  async function readStream(gen, response) {
    const message = new DeltaDocument();
    for await (const { event, data } of serverEvents(response)) {
      if (event === 'delta_encoding') continue; // "v1"
      if (data.trim() === '[DONE]') break;
      let payload;
      try {
        payload = JSON.parse(data);
      } catch (error) {
        continue;
      }
      if (!isObject(payload)) continue;
      if (typeof payload.type === 'string') continue; // typed events [C7.4]
      if (payload.error) {
        showError(gen);
        continue;
      }
      if (message.apply(payload) && message.doc) render(gen, message.doc);
    }
  }

  /**
   * Show what the message now says. Only an assistant message of content_type "text" on the
   * final channel (or none), addressed to all and not hidden, is the answer; "thoughts" and
   * "reasoning_recap" drive the thinking UI [C4.5, C7.5]; everything else is not shown.
   * @param {Generation} gen @param {Record<string, any>} doc
   */
  function render(gen, doc) {
    if (typeof doc.conversation_id === 'string') gen.conversationId = doc.conversation_id;
    if (gen.conversationId && gen.conversationId !== conversationId) {
      // A new chat's URL becomes /c/<id> during streaming, once the stream names it [C6.4].
      conversationId = gen.conversationId;
      showConversationUrl();
    }
    const message = doc.message;
    // "Processing image" [C10.3]: the image is being made; its skeleton shows [C10.2].
    if (isObject(message) && message.author?.role === 'tool' && message.metadata?.image_gen_async) {
      showImageSkeleton(gen);
      return;
    }
    if (!isObject(message) || message.author?.role !== 'assistant') return;
    if (message.metadata?.is_visually_hidden_from_conversation) return;
    const content = isObject(message.content) ? message.content : {};
    const type = content.content_type;
    if (type === 'thoughts') {
      showThinking(gen);
    } else if (type === 'reasoning_recap') {
      const seconds = Number(message.metadata?.finished_duration_sec);
      showThoughtSummary(gen, Number.isFinite(seconds) && seconds > 0
        ? TEXT.thought(Math.round(seconds)) : String(content.content || TEXT.thought(1)));
    } else if (type === 'text' && (message.channel == null || message.channel === 'final') &&
               (message.recipient == null || message.recipient === 'all')) {
      const parts = Array.isArray(content.parts) ? content.parts : [];
      showAnswer(gen, String(message.id || ''), parts.filter((p) => typeof p === 'string').join(''));
      if (typeof message.status === 'string' && message.status.startsWith('finished')) {
        gen.answered = true;
      }
    }
  }

  // ---- generated images [C10] and files [C11] (docs/sites.md#outputs) ---------------------------

  /** The loading skeleton `[data-testid="image-gen-loading-state"]` [C10.2]. @param {Generation} gen */
  function showImageSkeleton(gen) {
    if (gen.skeleton) return;
    gen.skeleton = el('div', { 'data-testid': 'image-gen-loading-state' });
    ensureTurn(gen, gen.questionId).append(gen.skeleton);
  }

  /**
   * The image arrives after the stream [C10.3]: the page reads the conversation (its image
   * message, C10.4), asks the files API for each pointer's signed URL [C10.6] and shows it
   * as `div#image-<uuid>.group/imagegen-image > img[alt^="Generated image"]` [C10.5], a
   * blurred and a sharp copy of one file; the skeleton goes as the image comes.
   * @param {Generation} gen
   */
  async function loadImages(gen) {
    const skeleton = gen.skeleton;
    if (!skeleton || !gen.conversationId) return;
    const images = [];
    try {
      const response = await fetch(`/backend-api/conversation/${encodeURIComponent(gen.conversationId)}`);
      const data = await response.json();
      const content = data?.mapping?.[data?.current_node]?.message?.content;
      const parts = content?.content_type === 'multimodal_text' && Array.isArray(content.parts)
        ? content.parts : [];
      for (const part of parts) {
        const stack = await imageStack(part);
        if (stack) images.push(stack);
      }
    } catch (error) {
      // No image: the skeleton goes all the same, as a failed generation's does.
    }
    skeleton.replaceWith(...images);
    gen.skeleton = null;
  }

  /** Sandbox links lose their href and become `button.behavior-btn`, in order [C11.2].
   * @param {HTMLElement|null} body */
  function sandboxButtons(body) {
    for (const link of body ? [...body.querySelectorAll('a[href^="sandbox:"]')] : []) {
      link.replaceWith(el('button', { type: 'button', class: 'behavior-btn' }, link.textContent || ''));
    }
  }

  /** @param {Generation} gen @param {string} messageId */
  function ensureTurn(gen, messageId) {
    if (!gen.turn) {
      const { turn, message } = addAssistantTurn(messageId || crypto.randomUUID());
      gen.turn = turn;
      gen.message = message;
    }
    return /** @type {HTMLElement} */ (gen.message);
  }

  /** @param {Generation} gen @returns {HTMLElement} the (possibly empty) answer container */
  function ensureBody(gen) {
    const message = ensureTurn(gen, gen.questionId);
    if (!gen.body) {
      gen.body = markdownBody();
      message.append(gen.body);
      gen.view = markdownView(gen.body, (view) => rendered(gen, view));
    }
    return gen.body;
  }

  /**
   * The working status [C4.1] with its skip control [C4.4], and an empty placeholder
   * `.markdown.result-thinking` [C2.4] while the model reasons.
   * @param {Generation} gen
   */
  function showThinking(gen) {
    if (gen.status || gen.phase === 'answering') return;
    gen.phase = 'thinking';
    const message = ensureTurn(gen, gen.questionId);
    const skip = el('button', { type: 'button' }, TEXT.skip);
    skip.addEventListener('click', () => {
      skip.setAttribute('disabled', '');
      // Fake-only endpoint: the real skip request is not documented; this one ends the fake
      // server's thinking pause (docs/sites.md#facts-without-evidence).
      fetch('/backend-api/conversation/skip_thinking', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message_id: gen.questionId }),
      }).catch(() => {});
    });
    gen.status = el('div', {}, el('span', { class: 'loading-shimmer' }, TEXT.thinking), skip);
    message.prepend(gen.status);
    ensureBody(gen).classList.add('result-thinking');
  }

  /**
   * The completed summary: a disclosure button inside the assistant turn [C4.2, C4.3]; in
   * Japanese its aria-label carries 思考時間 [C4.2].
   * @param {Generation} gen @param {string} label
   */
  function showThoughtSummary(gen, label) {
    const message = ensureTurn(gen, gen.questionId);
    gen.status?.remove();
    gen.status = null;
    if (message.querySelector(':scope > button[aria-expanded]')) return;
    const toggle = el('button', {
      type: 'button', 'aria-expanded': 'false',
      'aria-label': config.locale === 'ja' ? label : null,
    }, label);
    toggle.addEventListener('click', () => {
      toggle.setAttribute('aria-expanded', String(toggle.getAttribute('aria-expanded') !== 'true'));
    });
    message.prepend(toggle);
  }

  /** The answer so far. @param {Generation} gen @param {string} messageId @param {string} text */
  function showAnswer(gen, messageId, text) {
    const message = ensureTurn(gen, messageId);
    if (gen.phase !== 'answering') {
      gen.phase = 'answering';
      gen.status?.remove();
      gen.status = null;
      if (messageId) message.setAttribute('data-message-id', messageId);
      const body = ensureBody(gen);
      body.classList.remove('result-thinking');
      body.classList.add('result-streaming'); // [C2.4]
    }
    if (text === gen.markdown) return;
    gen.markdown = text;
    /** @type {InstanceType<typeof MarkdownView>} */ (gen.view).update(text);
  }

  /**
   * A rendering of the answer is in, as shells: its text goes in when the page can show it
   * (the background-tab quirk), and the page reports what it showed.
   * @param {Generation} gen @param {InstanceType<typeof MarkdownView>} view
   */
  function rendered(gen, view) {
    const shownAt = nowEpoch(); // before any report: a report's fetch takes time of its own
    showText(view, () => {
      if (!gen.failed && !gen.visibleReported && view.hasText) {
        gen.visibleReported = true;
        report(gen.questionId, 'text_visible', nowEpoch());
      }
    });
    if (!gen.failed && !gen.firstReported && view.rendered.length) {
      gen.firstReported = true;
      report(gen.questionId, 'first_token', shownAt);
    }
    scrollToEnd();
  }

  /**
   * An error turn is the assistant message's text itself, followed by a regenerate button
   * [C5.8, C2.8]: no alert role, no error class.
   * @param {Generation} gen
   */
  function showError(gen) {
    if (gen.failed) return;
    gen.failed = true;
    gen.status?.remove();
    gen.status = null;
    gen.phase = 'answering';
    const body = ensureBody(gen);
    body.classList.remove('result-thinking');
    gen.markdown = TEXT.error;
    // Only the pattern button[data-testid*=regenerate] is documented [C2.8].
    const retry = el('button', { type: 'button', 'data-testid': 'regenerate-button' }, TEXT.retry);
    retry.addEventListener('click', () => {
      if (generation) return;
      gen.turn?.remove();
      ask(gen.text, true);
    });
    // The button comes after the text, as the turn ends.
    /** @type {InstanceType<typeof MarkdownView>} */ (gen.view).update(TEXT.error)
      .then(() => gen.turn?.append(retry));
  }

  /** The URL becomes the conversation's [C6.1, C6.4], under its project or GPT [C12.1]; a
   * temporary chat's id never reaches the URL [C6.3]. */
  function showConversationUrl() {
    if (!temporary) history.pushState(null, '', `${gizmoPrefix}/c/${conversationId}`);
  }

  /**
   * The research plan's controls under its turn [C9.6]: a "Start" button (PDX), or a
   * countdown after which it starts by itself (OR); the start request and the wait for the
   * report are the fake's own (docs/sites.md#facts-without-evidence). Running, the turn
   * shows "Researching" [C9.7]; done, a "Deep research" iframe [C9.8] takes its place (the
   * report itself is in the conversation JSON [C9.9], which the page does not render).
   * @param {Generation} gen @param {Response} response
   */
  function researchPlan(gen, response) {
    const message = gen.message;
    if (!message || gen.stopped || gen.failed) return;
    const questionId = gen.questionId;
    const box = el('div', {});
    message.append(box);
    let started = false;
    /** @param {string} how */
    const start = async (how) => {
      if (started) return;
      started = true;
      box.replaceChildren(el('div', {}, TEXT.researching));
      await fetch('/backend-api/conversation/research/start', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message_id: questionId, how }),
      }).catch(() => {});
      for (;;) {
        const done = await fetch(`/__fake/research/${encodeURIComponent(questionId)}?timeout_ms=30000`)
          .then((r) => r.json()).catch(() => null);
        if (done && done.done) break;
        if (!done) return;
      }
      box.replaceChildren(el('iframe', {
        title: TEXT.researchFrame, src: 'about:blank', width: '600', height: '400',
      }));
    };
    if (response.headers.get('x-fake-research-start') === 'countdown') {
      const ms = Number(response.headers.get('x-fake-research-countdown-ms')) || 0;
      const label = el('span', {}, TEXT.startsIn(Math.ceil(ms / 1000)));
      box.append(label);
      setTimeout(() => start('countdown'), ms); // the site's own countdown (C9.6)
    } else {
      const button = el('button', { type: 'button' }, TEXT.researchStart);
      button.addEventListener('click', () => start('button'));
      box.append(button);
    }
  }

  /** The final state for a question: the submit slot back to idle, then report. */
  function finish(gen) {
    if (gen.finished) return;
    gen.finished = true;
    if (generation === gen) generation = null;
    gen.body?.classList.remove('result-streaming');
    if (gen.status && gen.stopped) {
      // Stopped while reasoning: a terminal disclosure, no answer, no action bar [C3.6].
      gen.status.replaceWith(el('button', { type: 'button', 'aria-expanded': 'false' },
        TEXT.stoppedThinking));
      gen.status = null;
    } else if (gen.turn && gen.view && !gen.failed && (gen.answered || gen.stopped)) {
      const markdown = gen.markdown;
      sandboxButtons(gen.body);
      gen.turn.append(turnActions(() => markdown));
    }
    if (gen.conversationId && gen.conversationId !== conversationId) {
      conversationId = gen.conversationId;
      showConversationUrl(); // [C6.1, C6.4]
    }
    updateButtons();
    report(gen.questionId, 'complete', nowEpoch(), gen.stopped);
    if (gen.conversationId) loadSidebar(); // a new or continued chat moves to the top
    // The stop button has gone; the image's skeleton stays until the image comes [C10.2].
    if (gen.skeleton && !gen.stopped && !gen.failed) loadImages(gen);
  }

  // ---- dialogs and page states ------------------------------------------------------------------

  /** The usage-limit dialog: [role=dialog] with the limit text and "Got it" [C5.7, C5.9];
   * its markup beyond that is undocumented, so it is plain elements. */
  function showLimitDialog() {
    const gotIt = el('button', { type: 'button' }, TEXT.gotIt);
    const dialog = el('div', { role: 'dialog', 'aria-modal': 'true' }, el('p', {}, TEXT.rateLimit),
      gotIt);
    gotIt.addEventListener('click', () => dialog.remove());
    document.body.append(dialog);
  }

  /** Logged-out CTAs [C5.1]: the modal no-auth login, with "Log in" / "Sign up for free". */
  function loginButtons() {
    return [
      el('button', { type: 'button', 'data-testid': 'login-button' }, TEXT.login),
      el('button', { type: 'button', 'data-testid': 'signup-button' }, TEXT.signup),
    ];
  }

  function showLoginModal() {
    if (document.querySelector('[data-testid="modal-no-auth-login"]')) return;
    document.body.append(el('div', {
      role: 'dialog', 'aria-modal': 'true', 'data-testid': 'modal-no-auth-login',
    }, ...loginButtons()));
  }

  /** @param {any} data @returns {{role: string, text: string, id: string,
   * inProgress: boolean}[]} the visible turns of a read conversation: {mapping, current_node}
   * (walked from current_node up through parent) or {messages: [...]} [C7.8], each a C7.5
   * message: user/assistant text, not hidden, final channel, to all; status "in_progress" for
   * an answer still being written */
  function historyTurns(data) {
    /** @param {any} message */
    const turn = (message) => {
      if (!isObject(message)) return null;
      const role = message.author?.role;
      if (role !== 'user' && role !== 'assistant') return null;
      if (message.metadata?.is_visually_hidden_from_conversation) return null;
      const content = message.content;
      if (!isObject(content) || content.content_type !== 'text') return null;
      if (message.channel != null && message.channel !== 'final') return null;
      if (message.recipient != null && message.recipient !== 'all') return null;
      const parts = Array.isArray(content.parts) ? content.parts : [];
      return {
        role, text: parts.filter((p) => typeof p === 'string').join(''),
        id: typeof message.id === 'string' ? message.id : '',
        inProgress: message.status === 'in_progress',
      };
    };
    const turns = [];
    if (isObject(data?.mapping) && typeof data.current_node === 'string') {
      const chain = [];
      let node = data.mapping[data.current_node];
      while (isObject(node)) {
        chain.unshift(node.message);
        node = node.parent ? data.mapping[node.parent] : null;
      }
      for (const message of chain) turns.push(turn(message));
    } else if (Array.isArray(data?.messages)) {
      for (const message of data.messages) turns.push(turn(message));
    }
    return /** @type {{role: string, text: string, id: string, inProgress: boolean}[]} */ (
      turns.filter((t) => t !== null));
  }

  /**
   * One generated image as the page shows it [C10.5]: its pointer [C10.4] asked of the files
   * API for a signed URL [C10.6], shown as a blurred and a sharp copy; null when refused.
   * @param {any} part @returns {Promise<HTMLElement|null>}
   */
  async function imageStack(part) {
    if (part?.content_type !== 'image_asset_pointer') return null;
    const fileId = String(part.asset_pointer || '').replace(/^sediment:\/\//, '');
    const found = await fetch(`/backend-api/files/download/${encodeURIComponent(fileId)}?post_id=&inline=false`);
    const described = await found.json();
    if (described?.status !== 'success') return null;
    const title = part.metadata?.dalle?.prompt || '';
    /** @param {boolean} blurred */
    const img = (blurred) => el('img', {
      alt: `Generated image: ${title}`, src: described.download_url,
      style: blurred ? 'filter: blur(16px)' : null,
    });
    return el('div', { id: `image-${crypto.randomUUID()}`, class: 'group/imagegen-image' },
      img(true), img(false));
  }

  /**
   * A reopened conversation's generated images [C10.4, C10.5]: each image message
   * (`multimodal_text` with `image_asset_pointer` parts) shown in the answer before it, as the
   * live page shows it there once loaded. That a reopened page shows them at all is the fake's
   * reading of C10.5 (the image in the answer's DOM), not a documented reload.
   * @param {any} data
   */
  async function showHistoryImages(data) {
    if (!isObject(data?.mapping) || typeof data.current_node !== 'string') return;
    const chain = [];
    let node = data.mapping[data.current_node];
    while (isObject(node)) {
      chain.unshift(node.message);
      node = node.parent ? data.mapping[node.parent] : null;
    }
    let anchor = '';
    for (const message of chain) {
      if (!isObject(message) || message.author?.role !== 'assistant') continue;
      const content = message.content;
      if (content?.content_type === 'text' && typeof message.id === 'string') anchor = message.id;
      if (content?.content_type !== 'multimodal_text' || !Array.isArray(content.parts)) continue;
      const target = anchor ? thread.querySelector(`[data-message-id="${CSS.escape(anchor)}"]`) : null;
      if (!target) continue;
      for (const part of content.parts) {
        const stack = await imageStack(part).catch(() => null);
        if (stack) target.append(stack);
      }
    }
  }

  /** @param {string} id */
  async function loadConversation(id) {
    let response = await fetch(`/backend-api/conversation/${encodeURIComponent(id)}`);
    if (!response.ok) response = await fetch(`/backend-api/conversations/${encodeURIComponent(id)}`);
    if (!response.ok) {
      thread.append(el('p', {}, TEXT.notFound));
      return;
    }
    const data = await response.json();
    const turns = historyTurns(data);
    // Rendered before any turn is shown, so the conversation appears whole, at once.
    const renderings = await Promise.all(turns.map((turn) =>
      turn.role === 'assistant' && !turn.inProgress ? renderMarkdown(turn.text, FLAVOR) : []));
    let question = '';
    turns.forEach(({ role, text, id: messageId, inProgress }, index) => {
      if (role === 'user') addUserTurn(question = text, messageId);
      else if (inProgress) ask(question, false, true); // still being written: follow it
      else addHistoryAnswer(text, renderings[index], messageId);
    });
    await showHistoryImages(data);
  }

  /** The sidebar's conversations, newest first [C5.2]: `a[data-testid="history-item-N"]`
   * to `/c/<id>` holding the title, loaded with GET /backend-api/conversations [C7.9] (whose
   * body, {items: [{id, title}]}, is the fake's own). */
  const historyItems = el('div', {});

  async function loadSidebar() {
    if (config.loggedOut) return;
    /** @type {{id: string, title: string}[]} */
    let items = [];
    try {
      const response = await fetch('/backend-api/conversations?offset=0&limit=50');
      if (!response.ok) return;
      const data = await response.json();
      items = Array.isArray(data?.items) ? data.items : [];
    } catch (error) {
      return;
    }
    historyItems.replaceChildren(...items.map((item, n) => el('a', {
      href: `/c/${encodeURIComponent(item.id)}`, 'data-testid': `history-item-${n}`,
    }, String(item.title))));
  }

  function renderChrome() {
    if (config.loggedOut) {
      // Guest mode: the composer is there too [C5.1]; the header offers Log in / Sign up.
      shell.append(el('header', {}, ...loginButtons()));
    } else {
      // Logged in: the history sidebar and the profile button [C5.2].
      shell.append(el('nav', { 'aria-label': 'Chat history' },
        el('a', { href: '/' }, TEXT.newChat), historyItems,
        el('button', { type: 'button', 'data-testid': 'accounts-profile-button' }, svgIcon())));
      loadSidebar();
    }
    shell.append(el('main', {}, thread, bottom));
  }

  function hydrate() {
    renderComposer();
    if (conversationId) loadConversation(conversationId);
  }

  renderChrome();
  if (config.hydrationMs > 0) {
    // The real app's composer appears only once its bundles have loaded and hydrated.
    setTimeout(hydrate, config.hydrationMs);
  } else {
    hydrate();
  }
})();
