// @ts-check
// The fake chatgpt.com page: the DOM bridge's ChatGPT driver works against (docs/sites.md#chatgpt,
// docs/sites.md#input-fallbacks, docs/sites.md#send-fallbacks, docs/flows.md#known-problems), fed
// by the server-sent event stream of /backend-api/conversation.
'use strict';

(() => {
  const { el, svgIcon, nowEpoch, report, MarkdownView, textChunks, readParagraphs } = FakeKit;
  const config = FakeKit.config();

  const TEXT = config.locale === 'ja' ? {
    newChat: '新しいチャット',
    placeholder: '質問してみましょう',
    inputLabel: 'ChatGPT とチャットする',
    send: 'プロンプトを送信する',
    stop: '生成を停止',
    youSaid: 'あなた:',
    assistantSaid: 'ChatGPT:',
    thinking: '思考中',
    skip: '今すぐ回答',
    /** @param {number} s */
    thinkingTime: (s) => `思考時間: ${s}s`,
    thoughts: '質問を読み、回答の組み立て方を考えています。',
    error: '応答の生成中に問題が発生しました。この問題が解決しない場合は、help.openai.com のヘルプセンターからお問い合わせください。',
    retry: '再試行',
    rateLimit: '1 時間あたりのメッセージの上限に達しました。しばらくしてからもう一度お試しください。',
    copy: 'コピーする',
    good: '良い回答',
    bad: '悪い回答',
    loginTitle: 'ログインまたはサインアップ',
    loginBody: 'よりスマートな回答を得たり、ファイルや画像をアップロードしたりできます。',
    login: 'ログイン',
    signup: '無料でサインアップ',
    notFound: '会話を読み込めません',
  } : {
    newChat: 'New chat',
    placeholder: 'Ask anything',
    inputLabel: 'Chat with ChatGPT',
    send: 'Send prompt',
    stop: 'Stop generating',
    youSaid: 'You said:',
    assistantSaid: 'ChatGPT said:',
    thinking: 'Thinking',
    skip: 'Skip thinking',
    /** @param {number} s */
    thinkingTime: (s) => `Thinking time: ${s}s`,
    thoughts: 'Reading the question and working out how to answer it.',
    error: 'Something went wrong while generating the response. If this issue persists please contact us through our help center at help.openai.com.',
    retry: 'Retry',
    rateLimit: "You've reached our limit of messages per hour. Please try again later.",
    copy: 'Copy',
    good: 'Good response',
    bad: 'Bad response',
    loginTitle: 'Log in or sign up',
    loginBody: "You'll get smarter responses and can upload files, images, and more.",
    login: 'Log in',
    signup: 'Sign up for free',
    notFound: 'Unable to load conversation',
  };

  const thread = /** @type {HTMLElement} */ (document.getElementById('thread'));
  const composerArea = /** @type {HTMLElement} */ (document.getElementById('composer-area'));
  /** @type {string|null} */
  let conversationId = (/^\/c\/([^/]+)/.exec(location.pathname) || [])[1] || null;
  let turnCount = 0;

  /**
   * @typedef {{element: HTMLElement, readonly text: string, clear(): void}} Input
   * @typedef {{input: Input, sendButton: HTMLButtonElement, stopButton: HTMLButtonElement,
   *            actions: HTMLElement}} Composer
   * @typedef {{text: string, phase: 'waiting'|'thinking'|'answering', abort: AbortController,
   *            questionId: string, conversationId: string|null, stopped: boolean,
   *            finished: boolean, turn: HTMLElement|null, message: HTMLElement|null,
   *            view: InstanceType<typeof MarkdownView>|null, markdown: string,
   *            firstReported: boolean, visibleReported: boolean, answered: boolean}} Generation
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
  // <p data-start="0" data-end="N"></p>. The fake fills text at once while the page is visible,
  // else from an animation frame (which runs only once the page is visible again), and also on
  // visibilitychange/focus; every streaming step checks again.

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

  // ---- the composer ------------------------------------------------------------------------------

  /**
   * ProseMirror owns its document: the state changes only through edits the browser makes
   * (typing, Input.insertText, IME, execCommand), which arrive as trusted input events. A
   * script writing innerHTML/textContent, or dispatching its own input event, changes the DOM
   * but not the state, so the send button stays disabled and sending would send nothing:
   * docs/flows.md#known-problem-2, "input not reflected".
   * @param {(text: string) => void} onChange @param {() => void} onEnter @returns {Input}
   */
  function proseMirrorInput(onChange, onEnter) {
    const element = el('div', {
      contenteditable: 'true', translate: 'no', class: 'ProseMirror', id: 'prompt-textarea',
      role: 'textbox', 'aria-multiline': 'true', 'aria-label': TEXT.inputLabel,
      'data-virtualkeyboard': 'true',
    });
    let state = '';
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
    element.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        onEnter();
      }
    });
    return {
      element,
      get text() { return state; },
      clear() { state = ''; renderEmpty(); onChange(state); },
    };
  }

  /**
   * A React-controlled textarea: its state follows every input event (React's onChange reads
   * .value then), trusted or not, but a bare `.value = ...` fires none and changes nothing.
   * @param {(text: string) => void} onChange @param {() => void} onEnter @returns {Input}
   */
  function textareaInput(onChange, onEnter) {
    const element = /** @type {HTMLTextAreaElement} */ (el('textarea', {
      id: 'prompt-textarea', 'data-testid': 'prompt-textarea', rows: '1',
      placeholder: TEXT.placeholder, 'aria-label': TEXT.inputLabel,
    }));
    let state = '';
    element.addEventListener('input', () => { state = element.value; onChange(state); });
    element.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        onEnter();
      }
    });
    return {
      element,
      get text() { return state; },
      clear() { state = ''; element.value = ''; onChange(state); },
    };
  }

  function renderComposer() {
    const sendButton = /** @type {HTMLButtonElement} */ (el('button', {
      type: 'button', class: 'composer-button', id: 'composer-submit-button',
      'data-testid': 'send-button', 'aria-label': TEXT.send, disabled: true,
    }, svgIcon()));
    const stopButton = /** @type {HTMLButtonElement} */ (el('button', {
      type: 'button', class: 'composer-button', 'data-testid': 'stop-button',
      'aria-label': TEXT.stop,
    }, svgIcon()));
    const makeInput = config.inputKind === 'textarea' ? textareaInput : proseMirrorInput;
    const input = makeInput(updateButtons, submit);
    const actions = el('div', { class: 'composer-actions' });
    const form = el('form', { class: 'composer', 'data-type': 'unified-composer' },
      el('div', { class: 'composer-input' }, input.element), actions);
    form.addEventListener('submit', (event) => { event.preventDefault(); submit(); });
    sendButton.addEventListener('click', submit);
    stopButton.addEventListener('click', stop);
    composer = { input, sendButton, stopButton, actions };
    composerArea.replaceChildren(form);
    updateButtons();
  }

  /** Send while idle; stop while answering; during the Thinking phase, neither button works. */
  function updateButtons() {
    if (!composer) return;
    const { input, sendButton, stopButton, actions } = composer;
    const showStop = generation !== null && generation.phase !== 'thinking';
    sendButton.disabled = generation !== null || !input.text.trim();
    const wanted = showStop ? stopButton : sendButton;
    if (actions.firstChild !== wanted) actions.replaceChildren(wanted);
  }

  function submit() {
    if (!composer || generation) return;
    const text = composer.input.text.trim();
    if (!text) return;
    composer.input.clear();
    ask(text, false);
  }

  function stop() {
    if (!generation) return;
    generation.stopped = true;
    generation.abort.abort();
  }

  // ---- turns ------------------------------------------------------------------------------------

  function scrollToEnd() {
    thread.scrollTop = thread.scrollHeight;
  }

  /** @param {string} text */
  function addUserTurn(text) {
    thread.append(el('article', {
      'data-turn': 'user', 'data-testid': `conversation-turn-${++turnCount}`, dir: 'auto',
    },
    el('h5', { class: 'sr-only' }, TEXT.youSaid),
    el('div', { 'data-message-author-role': 'user', 'data-message-id': crypto.randomUUID() },
      el('div', { class: 'whitespace-pre-wrap' }, text))));
    scrollToEnd();
  }

  /** @param {string} messageId @returns {{turn: HTMLElement, message: HTMLElement}} */
  function addAssistantTurn(messageId) {
    const message = el('div', {
      'data-message-author-role': 'assistant', 'data-message-id': messageId,
      'data-message-model-slug': 'gpt-5-thinking',
    });
    const turn = el('article', {
      'data-turn': 'assistant', 'data-testid': `conversation-turn-${++turnCount}`, dir: 'auto',
    }, el('h6', { class: 'sr-only' }, TEXT.assistantSaid), message);
    thread.append(turn);
    scrollToEnd();
    return { turn, message };
  }

  /** Copy and feedback buttons: the real ones appear once a turn is complete. */
  function turnActions() {
    const button = (testid, label) =>
      el('button', { type: 'button', 'data-testid': testid, 'aria-label': label }, svgIcon());
    return el('div', { class: 'turn-actions' },
      button('copy-turn-action-button', TEXT.copy),
      button('good-response-turn-action-button', TEXT.good),
      button('bad-response-turn-action-button', TEXT.bad));
  }

  /** @param {string} markdown */
  function addHistoryAnswer(markdown) {
    const { turn, message } = addAssistantTurn(crypto.randomUUID());
    const body = el('div', { class: 'markdown prose w-full break-words' });
    message.append(body);
    const view = new MarkdownView(body);
    view.update(markdown);
    showText(view, () => {});
    turn.append(turnActions());
  }

  // ---- asking -----------------------------------------------------------------------------------

  /** @param {string} text @param {boolean} retry */
  async function ask(text, retry) {
    if (!retry) addUserTurn(text);
    /** @type {Generation} */
    const gen = {
      text, phase: 'waiting', abort: new AbortController(), questionId: '',
      conversationId: null, stopped: false, finished: false, turn: null, message: null,
      view: null, markdown: '', firstReported: false, visibleReported: false, answered: false,
    };
    generation = gen;
    updateButtons();
    try {
      const response = await fetch('/backend-api/conversation', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({
          action: retry ? 'variant' : 'next',
          messages: [{ id: crypto.randomUUID(), author: { role: 'user' },
            content: { content_type: 'text', parts: [text] } }],
          conversation_id: conversationId,
          parent_message_id: crypto.randomUUID(),
          model: 'auto',
        }),
        signal: gen.abort.signal,
      });
      gen.questionId = response.headers.get('x-fake-question-id') || '';
      if (response.status === 401) {
        generation = null;
        showLoginWall();
        return;
      }
      if (response.status === 429) {
        thread.append(el('div', { class: 'rate-limit-notice', role: 'alert' }, TEXT.rateLimit));
        scrollToEnd();
      } else if (!response.ok) {
        showError(gen);
      } else {
        await readStream(gen, response);
      }
    } catch (error) {
      if (!gen.stopped) showError(gen);
    }
    finish(gen);
  }

  /** @param {Generation} gen @param {Response} response */
  async function readStream(gen, response) {
    let buffer = '';
    let lastPath = '';
    for await (const piece of textChunks(response)) {
      buffer += piece;
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const raw = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = 'message';
        let data = '';
        for (const line of raw.split('\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) data += line.slice(6);
        }
        if (event === 'delta_encoding' || !data || data === '[DONE]') continue;
        const payload = JSON.parse(data);
        if (payload.error) {
          showError(gen);
        } else if (payload.o === 'add') {
          onMessage(gen, payload.v.message, payload.v.conversation_id);
        } else if (payload.o === 'patch') {
          for (const op of payload.v) {
            if (op.p === '/message/status' && op.v === 'finished_successfully') gen.answered = true;
          }
        } else if (event === 'delta' && typeof payload.v === 'string') {
          // The v1 encoding omits path and op when they repeat the previous ones.
          lastPath = payload.p || lastPath;
          if (lastPath === '/message/content/parts/0') appendText(gen, payload.v);
        }
      }
    }
  }

  /** @param {Generation} gen @param {string} messageId */
  function ensureTurn(gen, messageId) {
    if (!gen.turn) {
      const { turn, message } = addAssistantTurn(messageId);
      gen.turn = turn;
      gen.message = message;
    }
    return /** @type {HTMLElement} */ (gen.message);
  }

  /** @param {Generation} gen @param {any} message @param {string} id of the conversation */
  function onMessage(gen, message, id) {
    gen.conversationId = id;
    const content = message.content || {};
    if (content.content_type === 'thoughts') {
      const skip = el('button', { type: 'button', 'data-testid': 'skip-thinking-button' }, TEXT.skip);
      skip.addEventListener('click', () => {
        skip.setAttribute('disabled', '');
        fetch('/backend-api/conversation/skip_thinking', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ message_id: gen.questionId }),
        }).catch(() => {});
      });
      ensureTurn(gen, gen.questionId).append(el('div', { class: 'thinking-status', role: 'status' },
        el('span', {}, TEXT.thinking), skip));
    } else if (content.content_type === 'reasoning_recap') {
      const seconds = message.metadata?.finished_duration_sec || 1;
      const host = ensureTurn(gen, gen.questionId);
      host.querySelector('.thinking-status')?.remove();
      const thoughts = el('div', { class: 'thoughts', hidden: true }, TEXT.thoughts);
      const toggle = el('button', { type: 'button', 'aria-expanded': 'false' },
        TEXT.thinkingTime(seconds));
      toggle.addEventListener('click', () => {
        const open = toggle.getAttribute('aria-expanded') !== 'true';
        toggle.setAttribute('aria-expanded', String(open));
        thoughts.hidden = !open;
      });
      host.prepend(toggle, thoughts);
    } else if (content.content_type === 'text') {
      const host = ensureTurn(gen, message.id);
      host.setAttribute('data-message-id', message.id);
      const body = el('div', { class: 'markdown prose w-full break-words' });
      host.append(body);
      gen.view = new MarkdownView(body);
    }
    gen.phase = content.content_type === 'thoughts' ? 'thinking' : 'answering';
    updateButtons();
  }

  /** @param {Generation} gen @param {string} chunk */
  function appendText(gen, chunk) {
    const view = gen.view;
    if (!view) return;
    gen.markdown += chunk;
    view.update(gen.markdown);
    const shownAt = nowEpoch(); // before any report: a report's fetch takes time of its own
    showText(view, () => {
      if (!gen.visibleReported && view.hasText) {
        gen.visibleReported = true;
        report(gen.questionId, 'text_visible', nowEpoch());
      }
    });
    if (!gen.firstReported) {
      gen.firstReported = true;
      report(gen.questionId, 'first_token', shownAt);
    }
    scrollToEnd();
  }

  /** "Something went wrong", with a Retry button that asks the same question again. */
  function showError(gen) {
    const host = ensureTurn(gen, gen.questionId || crypto.randomUUID());
    if (host.querySelector('.error-message')) return;
    const retry = el('button', { type: 'button', 'data-testid': 'regenerate-button' }, TEXT.retry);
    retry.addEventListener('click', () => {
      if (generation) return;
      gen.turn?.remove();
      ask(gen.text, true);
    });
    host.append(el('div', { class: 'error-message', role: 'alert' }, TEXT.error), retry);
  }

  /** The final state for a question: stop button gone, send button back, then report. */
  function finish(gen) {
    if (gen.finished) return;
    gen.finished = true;
    if (generation === gen) generation = null;
    if (gen.turn && gen.view && (gen.answered || gen.stopped)) gen.turn.append(turnActions());
    if (gen.conversationId && gen.conversationId !== conversationId) {
      conversationId = gen.conversationId;
      history.pushState(null, '', `/c/${conversationId}`);
    }
    updateButtons();
    report(gen.questionId, 'complete', nowEpoch(), gen.stopped);
  }

  // ---- page states ------------------------------------------------------------------------------

  function showLoginWall() {
    composer = null;
    composerArea.replaceChildren();
    thread.replaceChildren(el('div', { class: 'login-wall', 'data-testid': 'login-wall' },
      el('h2', {}, TEXT.loginTitle),
      el('p', {}, TEXT.loginBody),
      el('button', { type: 'button', 'data-testid': 'login-button' }, TEXT.login),
      el('button', { type: 'button', 'data-testid': 'signup-button' }, TEXT.signup)));
  }

  /** @param {string} id */
  async function loadConversation(id) {
    const response = await fetch(`/backend-api/conversation/${encodeURIComponent(id)}`);
    if (!response.ok) {
      thread.append(el('div', { class: 'error-message', role: 'alert' }, TEXT.notFound));
      return;
    }
    const data = await response.json();
    for (const message of data.messages) {
      if (message.role === 'user') addUserTurn(message.text);
      else addHistoryAnswer(message.text);
    }
  }

  function hydrate() {
    renderComposer();
    if (conversationId) loadConversation(conversationId);
  }

  const newChat = document.querySelector('[data-testid="create-new-chat-button"]');
  if (newChat) newChat.textContent = TEXT.newChat;
  if (config.loggedOut) {
    showLoginWall();
  } else if (config.hydrationMs > 0) {
    // The real app's composer appears only once its bundles have loaded and hydrated.
    setTimeout(hydrate, config.hydrationMs);
  } else {
    hydrate();
  }
})();
