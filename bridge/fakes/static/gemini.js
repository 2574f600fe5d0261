// @ts-check
// The fake gemini.google.com page (docs/sites.md#gemini, docs/sites.md#input-fallbacks,
// docs/sites.md#language-independent-selectors, docs/sites.md#gemini-stuck). It is built from
// custom elements with open shadow roots (docs/sites.md#gemini-shadow-dom), so
// document.querySelector sees none of the turns, the input or the buttons: only a search that
// descends into shadow roots (collectDeep) finds them.
'use strict';

(() => {
  const { el, imgIcon, nowEpoch, report, MarkdownView, textChunks, readParagraphs } = FakeKit;
  const config = FakeKit.config();

  const TEXT = config.locale === 'ja' ? {
    placeholder: 'Gemini に相談',
    inputLabel: 'ここにプロンプトを入力してください',
    send: 'プロンプトを送信',
    stop: '回答を停止',
    mic: 'マイク',
    good: '良い回答',
    bad: '悪い回答',
    copy: '回答をコピー',
    loading: '読み込み中',
    stopped: 'この回答を停止しました',
    error: 'エラーが発生しました。もう一度お試しください。',
    rateLimit: '現在、上限に達しました。しばらくしてからもう一度お試しください。',
    signInTitle: 'Gemini へようこそ',
    signIn: 'ログイン',
    notFound: 'この会話は見つかりませんでした',
  } : {
    placeholder: 'Ask Gemini',
    inputLabel: 'Enter a prompt here',
    send: 'Send message',
    stop: 'Stop response',
    mic: 'Microphone',
    good: 'Good response',
    bad: 'Bad response',
    copy: 'Copy response',
    loading: 'Loading',
    stopped: 'You stopped this response',
    error: 'Something went wrong. Please try again.',
    rateLimit: "You've reached your limit for now. Try again later.",
    signInTitle: 'Meet Gemini, your personal AI assistant',
    signIn: 'Sign in',
    notFound: "This conversation couldn't be found",
  };

  const STYLE = `
    :host { display: block; }
    .app-container { display: flex; flex-direction: column; height: 100vh; }
    .top-bar { padding: 12px 20px; font-weight: 600; }
    chat-window { flex: 1; overflow-y: auto; display: block; padding: 0 24px; }
    .input-area-container { padding: 12px 24px 20px; }
    .text-input-field { display: flex; align-items: flex-end; gap: 8px; border-radius: 24px;
      background: #f0f4f9; padding: 8px 12px; }
    rich-textarea { flex: 1; display: block; }
    .ql-editor { min-height: 24px; max-height: 200px; overflow-y: auto; outline: none; }
    .ql-editor p { margin: 0; }
    .ql-editor.ql-blank::before { content: attr(data-placeholder); color: #757575;
      position: absolute; pointer-events: none; }
    button { width: 36px; height: 36px; border: 0; border-radius: 50%; background: none;
      cursor: pointer; padding: 0; }
    button[aria-disabled="true"] { opacity: 0.4; cursor: default; }
    mat-icon { display: inline-block; width: 20px; height: 20px; background: #0b57d0;
      border-radius: 4px; }
    mat-icon[data-mat-icon-name="stop"] { background: #b3261e; }
    .sign-in-container { margin: auto; text-align: center; }
    .conversation-container { margin: 0 0 16px; }
  `;

  /**
   * Custom elements with an open shadow root, as collectDeep expects
   * (docs/sites.md#gemini-shadow-dom).
   */
  class ShadowHost extends HTMLElement {
    constructor() {
      super();
      this.attachShadow({ mode: 'open' });
    }
    /** @returns {ShadowRoot} */
    get root() { return /** @type {ShadowRoot} */ (this.shadowRoot); }
  }
  customElements.define('chat-app', class extends ShadowHost {});
  customElements.define('chat-window', class extends ShadowHost {});
  customElements.define('user-query', class extends ShadowHost {});
  customElements.define('model-response', class extends ShadowHost {});
  customElements.define('rich-textarea', class extends HTMLElement {});

  const app = /** @type {ShadowHost} */ (document.getElementById('app-root'));
  const announcer = /** @type {HTMLElement} */ (document.querySelector('[aria-live="polite"]'));
  /** @type {string|null} */
  let conversationId = (/^\/app\/([^/]+)/.exec(location.pathname) || [])[1] || null;

  app.root.append(el('style', {}, STYLE));
  const container = el('div', { class: 'app-container' }, el('header', { class: 'top-bar' },
    el('span', { class: 'bard-logo' }, 'Gemini')));
  app.root.append(container);

  /**
   * @typedef {{text: string, abort: AbortController, questionId: string, stuck: boolean,
   *            stopped: boolean, finished: boolean, response: ShadowHost,
   *            content: HTMLElement, view: InstanceType<typeof MarkdownView>|null,
   *            conversationId: string|null, shown: boolean}} Generation
   */
  /** @type {Generation|null} */
  let generation = null;
  /** @type {{editor: HTMLElement, sendButton: HTMLElement, micButton: HTMLElement,
   *          readonly text: string, clear(): void}|null} */
  let composer = null;
  /** @type {ShadowHost|null} */
  let chatWindow = null;

  function chatHistory() {
    if (!chatWindow) {
      chatWindow = /** @type {ShadowHost} */ (el('chat-window'));
      chatWindow.root.append(el('style', {}, STYLE),
        el('div', { id: 'chat-history', class: 'chat-history', role: 'log' }));
      container.insertBefore(chatWindow, container.children[1] || null);
    }
    return /** @type {HTMLElement} */ (chatWindow.root.getElementById('chat-history'));
  }

  function scrollToEnd() {
    if (chatWindow) chatWindow.scrollTop = chatWindow.scrollHeight;
  }

  // ---- turns ------------------------------------------------------------------------------------

  /** @param {string} text @returns {HTMLElement} the conversation-container of the exchange */
  function addExchange(text) {
    const query = /** @type {ShadowHost} */ (el('user-query'));
    query.root.append(el('div', { class: 'query-content' }, el('div', { class: 'query-text' },
      ...text.split('\n').map((line) => el('p', { class: 'query-text-line' }, line)))));
    const exchange = el('div', { class: 'conversation-container' }, query);
    chatHistory().append(exchange);
    scrollToEnd();
    return exchange;
  }

  /**
   * A model-response laid out as docs/sites.md#extraction-gemini extracts it:
   * img[alt="thumb_up"] → its button → the footer → the response container, which also holds
   * the answer's markdown.
   * @param {HTMLElement} exchange
   */
  function addResponse(exchange) {
    const response = /** @type {ShadowHost} */ (el('model-response'));
    const markdown = el('div', { class: 'markdown markdown-main-panel' });
    const content = el('div', { class: 'response-container-content' },
      el('div', { class: 'loading', role: 'progressbar', 'aria-label': TEXT.loading }),
      el('message-content', { class: 'model-response-text' }, markdown));
    response.root.append(el('style', {}, STYLE),
      el('div', { class: 'response-container' }, content));
    exchange.append(response);
    scrollToEnd();
    return { response, content, view: new MarkdownView(markdown) };
  }

  /** @param {ShadowHost} response */
  function addFeedback(response) {
    const button = (label, icon) => el('button', { type: 'button', 'aria-label': label }, imgIcon(icon));
    response.root.querySelector('.response-container')?.append(el('div', { class: 'response-footer' },
      button(TEXT.good, 'thumb_up'), button(TEXT.bad, 'thumb_down'),
      button(TEXT.copy, 'content_copy')));
  }

  /** @param {ShadowHost} response */
  function doneLoading(response) {
    response.root.querySelector('.loading')?.remove();
  }

  // ---- the composer ------------------------------------------------------------------------------

  /**
   * Quill owns Gemini's editor but reads the DOM back through a MutationObserver, so any change
   * counts, including a script setting innerText (docs/sites.md#input-fallbacks, phase 1).
   */
  function renderComposer() {
    const editor = el('div', {
      class: 'ql-editor ql-blank textarea new-input-ui', contenteditable: 'true', role: 'textbox',
      'aria-multiline': 'true', 'aria-label': TEXT.inputLabel, 'data-placeholder': TEXT.placeholder,
      'data-gramm': 'false', enterkeyhint: 'send',
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
    const micButton = el('button', {
      type: 'button', class: 'speech_dictation_mic_button', 'aria-label': TEXT.mic,
    }, imgIcon('mic'));
    const sendButton = el('button', { type: 'button', class: 'send-button' },
      el('mat-icon', { class: 'mat-icon', 'data-mat-icon-name': 'send', fonticon: 'send' }));
    sendButton.addEventListener('click', () => {
      if (generation) stop();
      else submit();
    });
    composer = {
      editor, sendButton, micButton,
      get text() { return state; },
      clear() { editor.replaceChildren(el('p', {}, el('br'))); sync(); },
    };
    container.append(el('div', { class: 'input-area-container' },
      el('input-area-v2', {}, el('div', { class: 'text-input-field' },
        el('rich-textarea', { class: 'text-input-field_textarea' }, editor),
        el('div', { class: 'trailing-actions' }, micButton, sendButton)))));
    updateButtons();
  }

  /** Send (disabled while empty) turns into Stop while answering; the mic hides meanwhile. */
  function updateButtons() {
    if (!composer) return;
    const { sendButton, micButton } = composer;
    const icon = /** @type {HTMLElement} */ (sendButton.querySelector('mat-icon'));
    const answering = generation !== null;
    sendButton.classList.toggle('stop', answering);
    sendButton.setAttribute('aria-label', answering ? TEXT.stop : TEXT.send);
    sendButton.setAttribute('aria-disabled', String(!answering && !composer.text.trim()));
    icon.setAttribute('data-mat-icon-name', answering ? 'stop' : 'send');
    icon.setAttribute('fonticon', answering ? 'stop' : 'send');
    micButton.hidden = answering;
  }

  function submit() {
    if (!composer || generation) return;
    const text = composer.text.trim();
    if (!text) return;
    composer.clear();
    ask(text);
  }

  function stop() {
    // The stuck state (docs/sites.md#gemini-stuck): the UI has hung, so Stop does nothing.
    if (!generation || generation.stuck) return;
    generation.stopped = true;
    generation.abort.abort();
  }

  // ---- asking -----------------------------------------------------------------------------------

  /** @param {string} text */
  async function ask(text) {
    const exchange = addExchange(text);
    const { response, content, view } = addResponse(exchange);
    /** @type {Generation} */
    const gen = {
      text, abort: new AbortController(), questionId: '', stuck: false, stopped: false,
      finished: false, response, content, view, conversationId: null, shown: false,
    };
    generation = gen;
    updateButtons();
    const request = [[text, 0, null, null, null, null, 0], [config.locale],
      [conversationId ? `c_${conversationId}` : '', '', '']];
    try {
      const reply = await fetch(
        '/_/BardChatUi/data/assistant.lamda.BardFrontendService/StreamGenerate?bl=boq_fake&rt=c', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
          body: 'f.req=' + encodeURIComponent(JSON.stringify([null, JSON.stringify(request)])) +
            '&at=fake-token',
          signal: gen.abort.signal,
        });
      gen.questionId = reply.headers.get('x-fake-question-id') || '';
      gen.stuck = reply.headers.get('x-fake-state') === 'stuck';
      if (reply.status === 429) {
        showMessage(gen, TEXT.rateLimit, 'rate-limit-message');
      } else if (!reply.ok) {
        showMessage(gen, TEXT.error, 'error-message');
      } else {
        await readFrames(gen, reply);
      }
    } catch (error) {
      if (!gen.stopped) showMessage(gen, TEXT.error, 'error-message');
    }
    finish(gen);
  }

  /** Gemini's length-prefixed frames: `<length>\n<json>\n`, length in UTF-16 code units. */
  async function* frames(reply) {
    let buffer = '';
    let prefixSeen = false;
    for await (const piece of textChunks(reply)) {
      buffer += piece;
      if (!prefixSeen) {
        if (buffer.length < 6) continue;
        buffer = buffer.replace(/^\)\]\}'\n\n?/, '');
        prefixSeen = true;
      }
      while (true) {
        const newline = buffer.indexOf('\n');
        if (newline < 0) break;
        const length = Number(buffer.slice(0, newline));
        if (buffer.length < newline + 1 + length) break;
        yield JSON.parse(buffer.slice(newline + 1, newline + 1 + length));
        buffer = buffer.slice(newline + 1 + length);
      }
    }
  }

  /** @param {Generation} gen @param {Response} reply */
  async function readFrames(gen, reply) {
    for await (const frame of frames(reply)) {
      const [kind, , payload] = frame[0];
      if (kind !== 'wrb.fr') continue;
      if (payload === null) {
        showMessage(gen, TEXT.error, 'error-message');
        continue;
      }
      const inner = JSON.parse(payload);
      gen.conversationId = String(inner[1][0]).replace(/^c_/, '');
      showAnswer(gen, inner[4][0][1][0]);
    }
  }

  /** Each frame carries the whole answer so far. @param {Generation} gen @param {string} text */
  function showAnswer(gen, text) {
    if (!gen.view) return;
    doneLoading(gen.response);
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

  /** A response that is a notice (rate limit, error) rather than an answer. */
  function showMessage(gen, text, className) {
    doneLoading(gen.response);
    gen.view = null;
    gen.content.append(el('div', { class: className, role: 'alert' }, text));
  }

  /** The final state: feedback icons shown, Stop back to Send, then report. */
  function finish(gen) {
    if (gen.finished) return;
    gen.finished = true;
    if (generation === gen) generation = null;
    doneLoading(gen.response);
    if (gen.view) {
      if (gen.stopped) gen.content.append(el('div', { class: 'stopped-note' }, TEXT.stopped));
      addFeedback(gen.response);
      announcer.textContent = /** @type {HTMLElement} */ (gen.view.container).innerText;
    }
    if (gen.conversationId && gen.conversationId !== conversationId) {
      conversationId = gen.conversationId;
      window.history.pushState(null, '', `/app/${conversationId}`);
    }
    updateButtons();
    report(gen.questionId, 'complete', nowEpoch(), gen.stopped);
  }

  // ---- page states ------------------------------------------------------------------------------

  function showSignIn() {
    container.append(el('div', { class: 'sign-in-container' },
      el('h1', {}, TEXT.signInTitle),
      el('a', {
        class: 'sign-in-button', 'aria-label': TEXT.signIn,
        href: 'https://accounts.google.com/ServiceLogin?continue=https://gemini.google.com/app',
      }, TEXT.signIn)));
  }

  /** Earlier turns of /app/<id>, from the batchexecute RPC hNvQHb. @param {string} id */
  async function loadConversation(id) {
    const request = [[['hNvQHb', JSON.stringify([`c_${id}`, 10]), null, 'generic']]];
    const reply = await fetch('/_/BardChatUi/data/batchexecute?rpcids=hNvQHb&rt=c', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
      body: 'f.req=' + encodeURIComponent(JSON.stringify(request)),
    });
    if (!reply.ok) {
      chatHistory().append(el('div', { class: 'error-message', role: 'alert' }, TEXT.notFound));
      return;
    }
    for await (const frame of frames(reply)) {
      for (const [question, answer] of JSON.parse(frame[0][2])) {
        const exchange = addExchange(question);
        if (answer === null) continue;
        const { response, view } = addResponse(exchange);
        doneLoading(response);
        view.update(answer);
        view.fill();
        addFeedback(response);
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
