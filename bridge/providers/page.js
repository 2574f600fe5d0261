// Injected into chatgpt.com / gemini.google.com tabs by bridge (Runtime.evaluate), once per
// document. It only reads the page and performs the input steps the drivers ask for; every
// decision (completion, fallbacks, retries) is made in Python. Selectors: docs/sites.md#chatgpt
// and docs/sites.md#gemini (shadow DOM: docs/sites.md#gemini-shadow-dom; icons:
// docs/sites.md#language-independent-selectors).
(() => {
  const VERSION = '__BRIDGE_PAGE_VERSION__';
  if (window.__bridgePage && window.__bridgePage.version === VERSION) return VERSION;

  // ---- DOM helpers --------------------------------------------------------------------------

  /** Every open shadow root below root, found by walking the whole tree. */
  function walkShadowRoots(root) {
    const out = [];
    const visit = (node) => {
      for (const el of node.querySelectorAll('*')) {
        if (el.shadowRoot) {
          out.push(el.shadowRoot);
          visit(el.shadowRoot);
        }
      }
    };
    visit(root);
    return out;
  }

  // While any watcher runs, the document's shadow roots are kept in a cache updated from
  // mutation records (added subtrees scanned, roots of removed hosts dropped), so a report
  // costs no walk of the whole page: on a long conversation that walk dominated each report.
  // Without a watcher, or when asked to refresh (the safety-net read), the tree is walked.
  let rootsCache = null;
  let watchers = 0;

  function shadowRoots(root = document) {
    if (root === document && rootsCache) return rootsCache;
    return walkShadowRoots(root);
  }

  function refreshRoots() {
    if (rootsCache) rootsCache = walkShadowRoots(document);
  }

  /** Update the cache from mutation records; returns the newly found roots. */
  function trackRoots(records) {
    if (!rootsCache) return [];
    const found = [];
    let removed = false;
    for (const record of records) {
      if (record.type !== 'childList') continue;
      if (record.removedNodes.length) removed = true;
      for (const node of record.addedNodes) {
        if (node.nodeType !== Node.ELEMENT_NODE) continue;
        if (node.shadowRoot) found.push(node.shadowRoot, ...walkShadowRoots(node.shadowRoot));
        found.push(...walkShadowRoots(node));
      }
    }
    if (removed) rootsCache = rootsCache.filter((r) => r.host.isConnected);
    for (const r of found) if (!rootsCache.includes(r)) rootsCache.push(r);
    return found;
  }

  /** querySelectorAll across the document and all shadow roots (docs/sites.md#gemini-shadow-dom). */
  function collectDeep(selector, root = document) {
    const seen = new Set();
    const out = [];
    for (const scope of [root, ...shadowRoots(root)]) {
      for (const el of scope.querySelectorAll(selector)) {
        if (!seen.has(el)) {
          seen.add(el);
          out.push(el);
        }
      }
    }
    return out;
  }

  const labelOf = (el) =>
    `${el.getAttribute('aria-label') || ''} ${el.getAttribute('data-testid') || ''} ${el.textContent || ''}`;
  const isDisabled = (el) =>
    !!el && (el.disabled === true || el.getAttribute('aria-disabled') === 'true');
  const last = (list) => (list.length ? list[list.length - 1] : null);
  const norm = (s) => (s || '').replace(/\s+/g, '');

  /** Text of an input: textarea value, else its paragraphs. */
  function inputText(el) {
    if (!el) return '';
    if (el.tagName === 'TEXTAREA') return el.value;
    const paras = el.querySelectorAll('p');
    if (paras.length) return [...paras].map((p) => p.textContent || '').join('\n').trim();
    return (el.textContent || '').trim();
  }

  // ---- markdown from rendered answers ----------------------------------------------------------

  const BLOCKS = new Set(['P', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'UL', 'OL', 'PRE', 'BLOCKQUOTE', 'TABLE', 'HR']);

  function inlineText(el) {
    // Buttons inside answers are UI ("Copy code", "Thinking time: 17s"), never answer text.
    let out = '';
    for (const node of el.childNodes) {
      if (node.nodeType === Node.TEXT_NODE) out += node.textContent;
      else if (node.nodeType === Node.ELEMENT_NODE && node.tagName !== 'BUTTON') {
        if (node.tagName === 'BR') out += '\n';
        else if (node.tagName === 'CODE') out += '`' + node.textContent + '`';
        else out += inlineText(node);
      }
    }
    return out;
  }

  function listMarkdown(list, depth) {
    const ordered = list.tagName === 'OL';
    const lines = [];
    let n = Number(list.getAttribute('start') || 1);
    for (const li of list.children) {
      if (li.tagName !== 'LI') continue;
      const nested = [...li.children].filter((c) => c.tagName === 'UL' || c.tagName === 'OL');
      const clone = li.cloneNode(true);
      for (const c of [...clone.children]) if (c.tagName === 'UL' || c.tagName === 'OL') c.remove();
      const marker = ordered ? `${n++}.` : '-';
      lines.push(`${'  '.repeat(depth)}${marker} ${inlineText(clone).trim()}`);
      for (const sub of nested) lines.push(listMarkdown(sub, depth + 1));
    }
    return lines.join('\n');
  }

  function codeMarkdown(pre) {
    const code = pre.querySelector('code') || pre;
    const cls = (code.getAttribute('class') || '') + ' ' + (pre.getAttribute('class') || '');
    const lang = (/language-([\w+#-]+)/.exec(cls) || [])[1] || pre.getAttribute('data-language') || '';
    const body = (code.textContent || '').replace(/\n$/, '');
    return '```' + lang + '\n' + body + '\n```';
  }

  function blockMarkdown(el) {
    switch (el.tagName) {
      case 'PRE':
        return codeMarkdown(el);
      case 'UL':
      case 'OL':
        return listMarkdown(el, 0);
      case 'BLOCKQUOTE':
        return toMarkdown(el).split('\n').map((l) => '> ' + l).join('\n');
      case 'TABLE':
        return [...el.querySelectorAll('tr')]
          .map((tr) => '| ' + [...tr.children].map((c) => inlineText(c).trim()).join(' | ') + ' |')
          .join('\n');
      case 'HR':
        return '---';
      default:
        if (/^H[1-6]$/.test(el.tagName)) return '#'.repeat(Number(el.tagName[1])) + ' ' + inlineText(el).trim();
        return inlineText(el).trim();
    }
  }

  /** Markdown of a rendered answer container: paragraphs, headings, lists, fenced code. */
  function toMarkdown(root) {
    const parts = [];
    const walk = (node) => {
      for (const child of node.children) {
        if (child.tagName === 'BUTTON') continue;
        if (BLOCKS.has(child.tagName)) parts.push(blockMarkdown(child));
        else if (child.querySelector(':scope p, :scope pre, :scope ul, :scope ol, :scope h1, :scope h2, :scope h3, :scope table'))
          walk(child);
        else {
          const text = inlineText(child).trim();
          if (text) parts.push(text);
        }
      }
    };
    walk(root);
    return parts.filter((p) => p.trim()).join('\n\n').trim();
  }

  // ---- ChatGPT (docs/sites.md#chatgpt) ---------------------------------------------------------

  /**
   * Cloudflare's interstitial in front of a site (docs/sites.md#challenge, SITE-FACTS C5.5):
   * its titles, its own element ids and frame, or its texts, on a page without the site's
   * composer. Its challenge-platform script alone is no sign: ChatGPT loads it on normal
   * pages too (OR, 2026-07-12).
   */
  function cloudflareChallenge(input) {
    if (input) return false;
    if (/^(just a moment|attention required! \| cloudflare)/i.test(document.title.trim())) return true;
    if (document.querySelector('#challenge-form, #challenge-running, #cf-challenge-running, iframe[src*="challenges.cloudflare.com"]')) return true;
    const text = document.body ? document.body.innerText || '' : '';
    return /verify you are human|checking your browser|needs to review the security of your connection/i.test(text);
  }

  // ChatGPT's usage-limit texts (docs/sites.md#rate-limit, SITE-FACTS C5.7): "You've reached
  // our limit of messages per hour", "…your GPT-4o limit", "You've hit the Free plan limit",
  // "Too many requests", "…making requests too quickly", "…temporarily limited access…",
  // "…please wait a few minutes…", the historic "usage cap", German "Nutzungslimit".
  // Japanese "上限に達し" has no source (docs/sites.md#facts-without-evidence).
  const RATE_LIMIT =
    /reached (our|your|the) (limit|usage cap)|reached your [\w.-]+ limit|hit the [\w .-]+ limit|too many requests|too quickly|temporarily limited access|please wait a few minutes|usage cap|nutzungslimit|上限に達し/i;
  const ERROR_TEXT = /something went wrong|問題が発生/i;

  const chatgpt = {
    /** Conversation URLs: /c/<id> (docs/sites.md#url-patterns). */
    conversationPath: /^\/c\/[^/]+/,
    answerCount: (o) => o.assistant_count,
    /** ProseMirror takes text through the editing commands, as typing would. */
    scriptInput(el, text) {
      api.focusInput('chatgpt');
      document.execCommand('insertText', false, text);
    },
    input: () =>
      document.querySelector('textarea#prompt-textarea') ||
      document.querySelector('textarea[data-testid="prompt-textarea"]') ||
      document.querySelector('#prompt-textarea[contenteditable="true"]') ||
      document.querySelector('.ProseMirror[contenteditable="true"]'),
    sendButton: () =>
      document.querySelector('button[data-testid="send-button"]') ||
      [...document.querySelectorAll('button')].find((b) => /送信|Send/.test(b.getAttribute('aria-label') || '')) ||
      null,
    stopButton: () =>
      document.querySelector('button[data-testid="stop-button"]') ||
      [...document.querySelectorAll('button')].find((b) => /stop generating|stop streaming|生成を停止/i.test(labelOf(b))) ||
      null,
    users: () => document.querySelectorAll('[data-message-author-role="user"]'),
    assistants: () => document.querySelectorAll('[data-message-author-role="assistant"]'),
    lastTurn() {
      const a = last(chatgpt.assistants());
      return a ? a.closest('article') || a : null;
    },
    skipButton: () =>
      document.querySelector('[data-testid="skip-thinking-button"]') ||
      [...document.querySelectorAll('button')].find((b) => /skip thinking|今すぐ回答/i.test(b.textContent || '')) ||
      null,
    loginWall: () =>
      !chatgpt.input() &&
      !!(document.querySelector('[data-testid="login-button"], [data-testid="login-wall"]')),
    rateLimit() {
      const alert = [...document.querySelectorAll('[role="alert"], .rate-limit-notice')].find((a) =>
        RATE_LIMIT.test(a.textContent || ''),
      );
      return alert ? alert.textContent.trim() : '';
    },
    errorTurn() {
      const turn = chatgpt.lastTurn();
      if (!turn) return '';
      const err = turn.querySelector('.error-message, [role="alert"]');
      if (err && ERROR_TEXT.test(err.textContent || '')) return err.textContent.trim();
      return '';
    },
    observe() {
      const assistants = chatgpt.assistants();
      const lastA = last(assistants);
      const turn = chatgpt.lastTurn();
      const send = chatgpt.sendButton();
      const md = lastA ? last(lastA.querySelectorAll('.markdown')) : null;
      const turnText = turn ? turn.textContent || '' : '';
      const markerScope = turn ? [...turn.querySelectorAll('button')].map((b) => b.textContent).join(' ') : '';
      return {
        user_count: chatgpt.users().length,
        assistant_count: assistants.length,
        has_stop_button: !!chatgpt.stopButton(),
        send_button_present: !!send,
        send_button_enabled: !!send && !isDisabled(send),
        input_empty: !inputText(chatgpt.input()).trim(),
        has_skip_thinking_button: !!chatgpt.skipButton(),
        still_generating_text: /is still generating|generating a response|回答を生成しています/i.test(turnText),
        thinking_complete_marker: /(思考時間[：:]\s*\d+)|(Thinking(?: time)?[:\s].*\d+\s*s)/i.test(markerScope),
        last_assistant_text_len: md ? (md.textContent || '').length : 0,
        login_wall: chatgpt.loginWall(),
        rate_limited: !!chatgpt.rateLimit(),
        error_turn: !!chatgpt.errorTurn(),
      };
    },
    /** Extraction order: docs/sites.md#extraction-chatgpt. */
    extract() {
      const turn = chatgpt.lastTurn();
      const lastA = last(chatgpt.assistants());
      if (lastA) {
        const md = last(lastA.querySelectorAll('.markdown'));
        if (md && md.textContent.trim()) return { text: toMarkdown(md), method: 'markdown' };
        const prose = last(lastA.querySelectorAll('.prose, [class*="markdown"]'));
        if (prose && prose.textContent.trim()) return { text: toMarkdown(prose), method: 'prose' };
      }
      if (turn) {
        const paras = [...turn.querySelectorAll('p')].map((p) => inlineText(p).trim()).filter(Boolean);
        if (paras.length) return { text: paras.join('\n\n'), method: 'paragraphs' };
        const clone = turn.cloneNode(true);
        for (const b of clone.querySelectorAll('button, .sr-only, h5, h6')) b.remove();
        const text = (clone.innerText || clone.textContent || '').trim();
        if (text) return { text, method: 'article_text' };
      }
      const main = document.querySelector('main') || document.body;
      let text = (main.innerText || '').trim();
      // Cut at the next turn's label, but never in the first 10 characters
      // (docs/sites.md#extraction-chatgpt).
      for (const marker of ['You said:', 'あなた:', 'You:']) {
        const idx = text.lastIndexOf(marker);
        if (idx > 10) text = text.slice(idx + marker.length);
      }
      return { text: text.trim(), method: 'body_text' };
    },
  };

  // ---- Gemini (docs/sites.md#gemini, #gemini-shadow-dom, #language-independent-selectors) -------

  const gemini = {
    /** Conversation URLs: /app/<id> (docs/sites.md#url-patterns). */
    conversationPath: /^\/app\/[^/]+/,
    answerCount: (o) => o.model_response_count,
    /** Gemini's Quill-like editor accepts its text set directly plus input events. */
    scriptInput(el, text) {
      el.innerText = text;
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
    },
    input: () =>
      last(collectDeep('rich-textarea [role="textbox"]')) ||
      last(collectDeep('[role="textbox"][contenteditable="true"]')) ||
      last(collectDeep('div[contenteditable="true"]')) ||
      last(collectDeep('textarea')),
    sendButton() {
      const icon = last(collectDeep('mat-icon[data-mat-icon-name="send"]'));
      if (icon) return icon.closest('button');
      return collectDeep('button').find((b) => /プロンプトを送信|送信|Send/.test(labelOf(b))) || null;
    },
    stopButton() {
      const icon = last(collectDeep('mat-icon[data-mat-icon-name="stop"]'));
      if (icon) return icon.closest('button');
      return collectDeep('button').find((b) => /^(stop|停止)/i.test((b.getAttribute('aria-label') || '').trim())) || null;
    },
    users: () => collectDeep('user-query, .user-query'),
    responses: () => collectDeep('model-response'),
    lastResponse: () => last(gemini.responses()),
    scopeOf: (el) => (el && el.shadowRoot ? el.shadowRoot : el),
    micButton: () => {
      const img = last(collectDeep('img[alt="mic"]'));
      const button = img ? img.closest('button') : null;
      return button && !button.hidden ? button : null;
    },
    feedbackInLast() {
      const scope = gemini.scopeOf(gemini.lastResponse());
      return !!scope && !!scope.querySelector('img[alt="thumb_up"], img[alt="thumb_down"]');
    },
    loginWall: () =>
      !gemini.input() &&
      collectDeep('a[href*="accounts.google.com/ServiceLogin"], .sign-in-button').length > 0,
    alertInLast(pattern, negate) {
      const scope = gemini.scopeOf(gemini.lastResponse());
      if (!scope) return '';
      const alert = [...scope.querySelectorAll('[role="alert"]')].find((a) => pattern.test(a.textContent || '') !== negate);
      return alert ? alert.textContent.trim() : '';
    },
    rateLimit: () => gemini.alertInLast(/limit|上限/i, false),
    errorTurn: () => gemini.alertInLast(/limit|上限/i, true),
    responseMarkdown() {
      const scope = gemini.scopeOf(gemini.lastResponse());
      return scope ? last(scope.querySelectorAll('.markdown')) || scope.querySelector('message-content') : null;
    },
    observe() {
      const send = gemini.sendButton();
      const md = gemini.responseMarkdown();
      return {
        user_count: gemini.users().length,
        model_response_count: gemini.responses().length,
        has_stop_button: !!gemini.stopButton(),
        has_mic_button: !!gemini.micButton(),
        has_feedback_buttons: gemini.feedbackInLast(),
        send_button_enabled: !!send && !isDisabled(send),
        input_empty: !inputText(gemini.input()).trim(),
        last_response_text_len: md ? (md.textContent || '').length : 0,
        login_wall: gemini.loginWall(),
        rate_limited: !!gemini.rateLimit(),
        error_turn: !!gemini.errorTurn(),
      };
    },
    /** Extraction order: docs/sites.md#extraction-gemini. */
    extract() {
      const thumb = last(collectDeep('img[alt="thumb_up"]'));
      const button = thumb ? thumb.closest('button') : null;
      const container = button && button.parentElement ? button.parentElement.parentElement : null;
      const lastResp = gemini.scopeOf(gemini.lastResponse());
      if (container && lastResp && (lastResp === container.getRootNode())) {
        const md = container.querySelector('.markdown') || container;
        const text = toMarkdown(md);
        if (text) return { text, method: 'feedback' };
      }
      const md = gemini.responseMarkdown();
      if (md) {
        const text = toMarkdown(md) || (md.textContent || '').trim();
        if (text) return { text, method: 'selector' };
      }
      const live = last(collectDeep('[aria-live="polite"]'));
      return { text: live ? (live.textContent || '').trim() : '', method: 'aria_live' };
    },
  };

  const providers = { chatgpt, gemini };

  // ---- watching -----------------------------------------------------------------------------

  /**
   * Observe the document and every shadow root (new ones included). ``onChange`` runs at
   * most once per task burst: mutation callbacks arriving before it ran are merged. A
   * MessageChannel task, not a timer: hidden tabs throttle timers to once a second.
   */
  function watchMutations(onChange) {
    const options = { subtree: true, childList: true, characterData: true, attributes: true };
    if (watchers++ === 0 || !rootsCache) rootsCache = walkShadowRoots(document);
    const channel = new MessageChannel();
    let scheduled = false;
    let stopped = false;
    channel.port1.onmessage = () => {
      scheduled = false;
      if (!stopped) onChange();
    };
    const mo = new MutationObserver((records) => {
      for (const r of trackRoots(records)) mo.observe(r, options);
      if (!scheduled) {
        scheduled = true;
        channel.port2.postMessage(null);
      }
    });
    for (const root of [document, ...rootsCache]) mo.observe(root, options);
    return () => {
      if (stopped) return;
      stopped = true;
      mo.disconnect();
      channel.port1.close();
      if (--watchers === 0) rootsCache = null;
    };
  }

  let stopWatching = null;
  let settled = false;

  const api = {
    version: VERSION,
    collectDeep,
    toMarkdown,
    observe(p) {
      refreshRoots(); // the safety-net read: catch roots attached without a mutation
      return providers[p].observe();
    },
    extract: (p) => providers[p].extract(),
    notices: (p) => ({ rateLimit: providers[p].rateLimit(), error: providers[p].errorTurn() }),
    counts(p) {
      const o = providers[p].observe();
      return { user: o.user_count, assistant: providers[p].answerCount(o) };
    },

    /** Report observe() through the CDP binding whenever it changes (one report per change). */
    watch(p, binding) {
      if (stopWatching) stopWatching();
      let lastSent = '';
      const report = () => {
        const s = JSON.stringify(providers[p].observe());
        if (s !== lastSent) {
          lastSent = s;
          window[binding](s);
        }
      };
      stopWatching = watchMutations(report);
      report();
      return true;
    },
    unwatch() {
      if (stopWatching) stopWatching();
      stopWatching = null;
      return true;
    },

    /**
     * Resolve when the page is ready for a question or shows why it cannot be: composer
     * present, login wall, or rate limit. Event-driven (mutations), bounded by timeoutMs.
     */
    whenReady(p, timeoutMs) {
      const prov = providers[p];
      const state = () => {
        if (cloudflareChallenge(prov.input())) return 'challenge';
        if (prov.loginWall()) return 'login';
        if (prov.input() && document.readyState === 'complete') return 'ready';
        return '';
      };
      return waitUntil(state, timeoutMs);
    },

    /**
     * Whether earlier turns may still be arriving: a document loaded at a conversation URL
     * (/c/<id>, /app/<id>) moments ago, asked for the first time. A fresh chat (whose URL
     * only became /c/<id> by pushState), a page loaded long ago, or one already settled has
     * nothing left to load, so it pays no quiet window.
     */
    needsSettle(p) {
      if (settled) return false; // once per document: later turns were made live, not loaded
      settled = true;
      const conversation = providers[p].conversationPath;
      const nav = performance.getEntriesByType('navigation')[0];
      const loadedAt = nav ? new URL(nav.name).pathname : location.pathname;
      return conversation.test(loadedAt) && performance.now() < 15000;
    },

    /** Resolve once no mutation happened for quietMs (page settled), or at timeoutMs. */
    quiet(quietMs, timeoutMs) {
      return new Promise((resolve) => {
        let timer = setTimeout(done, quietMs);
        const stop = watchMutations(() => {
          clearTimeout(timer);
          timer = setTimeout(done, quietMs);
        });
        const deadline = setTimeout(done, timeoutMs);
        function done() {
          clearTimeout(timer);
          clearTimeout(deadline);
          stop();
          resolve(true);
        }
      });
    },

    /** Resolve when the send button is enabled (docs/sites.md#send-fallbacks: wait, don't click blind). */
    whenSendEnabled(p, timeoutMs) {
      return waitUntil(() => {
        const b = providers[p].sendButton();
        return b && !isDisabled(b) ? 'enabled' : '';
      }, timeoutMs);
    },

    /** Resolve 'gone' when no stop button shows (docs/sites.md#gemini-stuck); '' at timeoutMs. */
    whenStopGone(p, timeoutMs) {
      return waitUntil(() => (providers[p].stopButton() ? '' : 'gone'), timeoutMs);
    },

    /** Resolve when the user turn count exceeds n (the question was sent). */
    whenUserCountAbove(p, n, timeoutMs) {
      return waitUntil(() => (providers[p].users().length > n ? 'sent' : ''), timeoutMs);
    },

    focusInput(p) {
      const el = providers[p].input();
      if (!el) return false;
      el.focus();
      if (el.tagName === 'TEXTAREA') el.select();
      else {
        const range = document.createRange();
        range.selectNodeContents(el);
        const sel = getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
      }
      return true;
    },

    /** Phase 1 input (docs/sites.md#input-fallbacks): JavaScript only. */
    setInputByScript(p, text) {
      const el = providers[p].input();
      if (!el) return false;
      el.focus();
      if (el.tagName === 'TEXTAREA') {
        // React reads .value on input events; set it through the native setter first.
        const setter = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set;
        setter.call(el, text);
        el.dispatchEvent(new Event('input', { bubbles: true }));
      } else {
        providers[p].scriptInput(el, text);
      }
      return true;
    },

    clearInput(p) {
      if (!api.focusInput(p)) return false;
      document.execCommand('delete', false);
      return true;
    },

    inputHolds(p, text) {
      const have = norm(inputText(providers[p].input()));
      const want = norm(text).slice(0, 20);
      return want.length > 0 && have.includes(want);
    },

    /** Click send by script; returns the button's centre for the CDP mouse fallback. */
    sendTarget(p) {
      const b = providers[p].sendButton();
      if (!b) return null;
      b.scrollIntoView({ block: 'center' });
      const r = b.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2, disabled: isDisabled(b) };
    },
    clickSend(p) {
      const b = providers[p].sendButton();
      if (!b || isDisabled(b)) return false;
      b.click();
      return true;
    },
    /** A cancelled ask stops the answer so the tab is ready for the next question. */
    clickStop(p) {
      const b = providers[p].stopButton();
      if (!b) return false;
      b.click();
      return true;
    },
    clickSkipThinking() {
      const b = chatgpt.skipButton();
      if (!b || isDisabled(b)) return false;
      b.click();
      return true;
    },

    /** Small page summary for debug dumps (docs/flows.md#debug-dumps). */
    debugInfo(p) {
      const body = document.body ? document.body.innerText || '' : '';
      return {
        url: location.href,
        title: document.title,
        readyState: document.readyState,
        visibilityState: document.visibilityState,
        bodySnippet: body.slice(0, 200),
        bodyLen: body.length,
        observation: providers[p].observe(),
      };
    },
  };

  /** Resolve with state() once it is truthy, re-checking on every mutation; '' at timeout. */
  function waitUntil(state, timeoutMs) {
    return new Promise((resolve) => {
      const now = state();
      if (now) return resolve(now);
      let stop = null;
      const deadline = setTimeout(() => {
        if (stop) stop();
        resolve('');
      }, timeoutMs);
      const check = () => {
        const s = state();
        if (s) {
          clearTimeout(deadline);
          stop();
          resolve(s);
        }
      };
      stop = watchMutations(check);
      // readyState changes are not DOM mutations.
      document.addEventListener('readystatechange', check);
    });
  }

  Object.defineProperty(window, '__bridgePage', { value: api, configurable: true, enumerable: false });
  return VERSION;
})();
