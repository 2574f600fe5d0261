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
  const { el, svgIcon, nowEpoch, report, MarkdownView, readParagraphs, FrameReader } = FakeKit;
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
  };
  // No German Gemini text is documented: "de" keeps the English labels.
  const TEXT = config.locale === 'ja' ? JA : EN;
  const STREAM_PATH = '/_/BardChatUi/data/assistant.lamda.BardFrontendService/StreamGenerate';
  const USAGE_LIMIT = 1037; // [G5.5]

  const root = el('div', {});
  document.body.prepend(root);
  /** @type {string|null} */
  let conversationId = (/^\/app\/([^/]+)/.exec(location.pathname) || [])[1] || null;
  let requestCount = 0;

  /**
   * @typedef {{text: string, xhr: XMLHttpRequest|null, questionId: string, stuck: boolean,
   *            stopped: boolean, finished: boolean, response: HTMLElement,
   *            content: HTMLElement, message: HTMLElement, footer: HTMLElement,
   *            view: InstanceType<typeof MarkdownView>, conversationId: string|null,
   *            latest: string, errorCode: number|null, shown: boolean}} Generation
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
    }
    return scroller;
  }

  function scrollToEnd() {
    if (scroller) scroller.scrollTop = scroller.scrollHeight;
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
    chatHistory().append(exchange);
    scrollToEnd();
    return exchange;
  }

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
    return { response, content, message, footer, view: new MarkdownView(markdown, { site: 'gemini' }) };
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
    root.append(el('div', {}, el('rich-textarea', {}, editor), slot));
    updateButtons();
  }

  /** Mic and send swap in one place as the box fills [G1.4]; while answering the send
   * button is the stop button: class `stop`, "Stop response", the stop icon [G1.5]. */
  function updateButtons() {
    if (!composer) return;
    const { send, mic, slot } = composer;
    const answering = generation !== null;
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
      const text = dig(inner, [4, 0, 1, 0]); // the whole text so far [G7.2]
      if (typeof text === 'string' && text) showAnswer(gen, text); // latest non-empty wins
    }
  }

  /** The text so far. @param {Generation} gen @param {string} text */
  function showAnswer(gen, text) {
    if (text === gen.latest) return;
    gen.latest = text;
    gen.content.querySelector('[role="progressbar"]')?.remove();
    gen.view.update(text);
    gen.view.fill();
    const shownAt = nowEpoch();
    if (!gen.shown && gen.view.hasText) {
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
      xhr.addEventListener('readystatechange', () => {
        if (xhr.readyState === XMLHttpRequest.HEADERS_RECEIVED) {
          gen.questionId = xhr.getResponseHeader('x-fake-question-id') || '';
          gen.stuck = xhr.getResponseHeader('x-fake-state') === 'stuck'; // fake-only
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
    const { response, content, message, footer, view } = addResponse(exchange);
    /** @type {Generation} */
    const gen = {
      text, xhr: null, questionId: '', stuck: false, stopped: false, finished: false,
      response, content, message, footer, view, conversationId: null, latest: '',
      errorCode: null, shown: false,
    };
    generation = gen;
    updateButtons();
    const request = [[text, 0, null, null, null, null, 0], [config.locale],
      [conversationId ? `c_${conversationId}` : '', '', '']];
    const body = 'f.req=' + encodeURIComponent(JSON.stringify([null, JSON.stringify(request)])) +
      '&at=' + encodeURIComponent('fake-at-token');
    const status = await stream(gen, body);
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
    finish(gen);
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
      window.history.pushState(null, '', `/app/${conversationId}`); // [G6.2]
    }
    updateButtons();
    report(gen.questionId, 'complete', nowEpoch(), gen.stopped);
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
    for (const frame of new FrameReader().push(await reply.text() + '\n')) {
      for (const part of Array.isArray(frame) ? frame : []) {
        if (!Array.isArray(part) || part[0] !== 'wrb.fr' || typeof part[2] !== 'string') continue;
        const turns = parse(part[2]);
        for (const turn of Array.isArray(turns) ? turns : []) {
          if (!Array.isArray(turn) || typeof turn[0] !== 'string') continue;
          const exchange = addExchange(turn[0]);
          if (typeof turn[1] !== 'string') continue;
          const { content, message, footer, view } = addResponse(exchange);
          nameResponse(message, hexId());
          content.querySelector('[role="progressbar"]')?.remove();
          view.update(turn[1]);
          view.fill();
          complete(footer, content);
        }
      }
    }
  }

  function hydrate() {
    chatHistory();
    renderComposer();
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
