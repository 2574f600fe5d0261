// @ts-check
// Shared by both fake sites: page config, DOM helpers, the markdown view, the clipboard
// write of the sites' copy buttons, and the reports that tell the fake server when the DOM
// showed something. Plain script, no build step.
'use strict';

const FakeKit = (() => {
  /** @returns {Record<string, any>} the page-level settings the server rendered into the page */
  function config() {
    const node = document.getElementById('fake-config');
    return JSON.parse(node ? node.textContent || '{}' : '{}');
  }

  /** Epoch seconds on the page's clock: what "the page showed it at" means in the records. */
  function nowEpoch() {
    return (performance.timeOrigin + performance.now()) / 1000;
  }

  /**
   * Tell the fake server what the page showed. keepalive lets a report made just before a
   * navigation still arrive. Fake-only traffic (bridge/fakes/README.md).
   * @param {string} questionId
   * @param {'first_token'|'text_visible'|'complete'} event
   * @param {number} at epoch seconds
   * @param {boolean} [stopped]
   */
  function report(questionId, event, at, stopped = false) {
    if (!questionId) return;
    fetch('/__fake/report', {
      method: 'POST',
      keepalive: true,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question_id: questionId, event, at, stopped }),
    }).catch(() => {});
  }

  /**
   * document.createElement with attributes and children.
   * @param {string} tag
   * @param {Record<string, string|boolean|null|undefined>} [attrs]
   * @param {...(Node|string|null)} children
   * @returns {HTMLElement}
   */
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === false || value === null || value === undefined) continue;
      node.setAttribute(name, value === true ? '' : value);
    }
    for (const child of children) if (child !== null) node.append(child);
    return node;
  }

  /** A tiny inline SVG icon: the real sites' icons carry no text, so neither do these. */
  function svgIcon() {
    const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('width', '16');
    svg.setAttribute('height', '16');
    svg.setAttribute('viewBox', '0 0 16 16');
    svg.setAttribute('aria-hidden', 'true');
    const circle = document.createElementNS('http://www.w3.org/2000/svg', 'circle');
    circle.setAttribute('cx', '8');
    circle.setAttribute('cy', '8');
    circle.setAttribute('r', '5');
    svg.append(circle);
    return svg;
  }

  /**
   * What a site's copy button does: put `text` on the clipboard. The write goes through
   * navigator.clipboard.writeText looked up at the moment of the click, so a page-level
   * replacement of it (a test, bridge's copy capture) receives the text; where that API is
   * missing or refuses (headless, no focus), a `copy` event carries it instead
   * (SITE-FACTS C2.7: oracle reads the answer from the copy event or the clipboard).
   * @param {string} text
   */
  function copyText(text) {
    const viaCopyEvent = () => {
      /** @param {ClipboardEvent} event */
      const onCopy = (event) => {
        event.clipboardData?.setData('text/plain', text);
        event.preventDefault();
      };
      document.addEventListener('copy', onCopy);
      try {
        document.execCommand('copy');
      } finally {
        document.removeEventListener('copy', onCopy);
      }
    };
    const clipboard = navigator.clipboard;
    if (clipboard && typeof clipboard.writeText === 'function') {
      Promise.resolve()
        .then(() => clipboard.writeText(text))
        .catch(viaCopyEvent);
    } else {
      viaCopyEvent();
    }
  }

  // ---- markdown: rendered by the fake server (bridge/fakes/render.py, markdown-it-py) ---------
  //
  // The page sends the markdown it has so far to POST /__fake/render and shows the HTML that
  // comes back, one string per top-level block. The conversion is a kept library's, not code
  // written here; the server adds only the sites' dressing (ChatGPT's data-start/data-end and
  // code-block header, Gemini's .code-block, KaTeX's reduced markup). Fake-only traffic, like
  // the reports (docs/sites.md#facts-without-evidence).

  const RENDER_PATH = '/__fake/render';

  /**
   * How a site dresses its markdown.
   * - chatgpt: every block element carries data-start/data-end (its source offsets); a code
   *   block's <pre> holds a header (language label, "Copy code" button) above the <code>.
   * - gemini: code blocks are div.code-block with the label in .code-block-decoration
   *   (SITE-FACTS G2.4) above <pre><code>.
   * @typedef {{site: 'chatgpt'|'gemini', copyCode?: string}} Flavor
   */

  /**
   * The HTML of each top-level block of `markdown`, as the server renders it for `flavor`.
   * @param {string} markdown @param {Flavor} flavor @returns {Promise<string[]>}
   */
  async function renderMarkdown(markdown, flavor) {
    if (!markdown) return [];
    const response = await fetch(RENDER_PATH, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ markdown, site: flavor.site, copy_code: flavor.copyCode || null }),
    });
    if (!response.ok) throw new Error(`render failed: HTTP ${response.status}`);
    const { blocks } = await response.json();
    return blocks;
  }

  const parser = document.createElement('template');

  /** @param {string} html one block's HTML @returns {Node} its element */
  function nodeOf(html) {
    parser.innerHTML = html;
    const node = parser.content.firstChild || document.createTextNode('');
    parser.content.replaceChildren();
    return node;
  }

  /** @param {Node} node @returns {Node} a deep copy without any text: a block's bare shell */
  function shellOf(node) {
    const copy = node.cloneNode(true);
    const texts = [];
    const walker = document.createTreeWalker(copy, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) texts.push(walker.currentNode);
    for (const text of texts) text.parentNode?.removeChild(text);
    return copy;
  }

  /**
   * Renders streaming markdown into a container, replacing only the top-level blocks that
   * changed.
   *
   * update() asks the server for the markdown's HTML; while a rendering is on its way, later
   * updates wait and only the newest is rendered next (so a fast stream costs one rendering
   * per round trip, not one per chunk). Each rendering goes into the DOM as bare shells
   * (ChatGPT's carry data-start and data-end); their text arrives with fill(). ChatGPT's page
   * fills text from an animation frame, and Chromium runs no animation frames in a hidden
   * page: that is the background-tab quirk (docs/sites.md#background-tab). Gemini's page
   * fills at once.
   */
  class MarkdownView {
    /**
     * @param {HTMLElement} container @param {Flavor} [flavor]
     * @param {(view: MarkdownView) => void} [onRender] called each time new shells are in
     */
    constructor(container, flavor = { site: 'chatgpt' }, onRender = () => {}) {
      this.container = container;
      this.flavor = flavor;
      this.onRender = onRender;
      /** the markdown wanted on screen */
      this.markdown = '';
      /** the markdown whose rendering is in the DOM */
      this.shown = '';
      /** @type {{html: string, full: Node, node: Node, filled: boolean}[]} */
      this.rendered = [];
      this.busy = false;
      /** @type {(() => void)[]} */
      this.waiting = [];
      if (flavor.site === 'chatgpt') {
        // A code block's "Copy code" copies that block's code only.
        container.addEventListener('click', (event) => {
          const target = /** @type {Element} */ (event.target);
          const button = target.closest?.('pre button');
          const code = button?.closest('pre')?.querySelector('code');
          if (code && container.contains(button)) copyText((code.textContent || '').replace(/\n$/, ''));
        });
      }
    }

    /**
     * Show `markdown` (rendered on the server). @param {string} markdown
     * @returns {Promise<void>} settled once it (or a later update) is in the DOM as shells
     */
    update(markdown) {
      this.markdown = markdown;
      this.pump();
      return this.settled();
    }

    /** @returns {Promise<void>} resolved when no rendering is pending */
    settled() {
      if (!this.busy && this.shown === this.markdown) return Promise.resolve();
      return new Promise((resolve) => this.waiting.push(resolve));
    }

    async pump() {
      if (this.busy) return;
      this.busy = true;
      try {
        while (this.shown !== this.markdown) {
          const markdown = this.markdown;
          let blocks;
          try {
            blocks = await renderMarkdown(markdown, this.flavor);
          } catch (error) {
            break; // the server went away (the page is closing): show what is there
          }
          this.apply(markdown, blocks);
        }
      } finally {
        this.busy = false;
        for (const resolve of this.waiting.splice(0)) resolve();
      }
    }

    /**
     * Show a rendering made beforehand (renderMarkdown), at once: a turn read from history
     * appears with its text, as on the sites.
     * @param {string} markdown @param {string[]} blocks
     */
    show(markdown, blocks) {
      this.markdown = markdown;
      this.apply(markdown, blocks);
    }

    /**
     * Put a rendering in, as shells: blocks equal to the ones shown are kept.
     * @param {string} markdown @param {string[]} blocks its rendering
     */
    apply(markdown, blocks) {
      this.shown = markdown;
      let same = 0;
      while (same < blocks.length && same < this.rendered.length &&
             this.rendered[same].html === blocks[same]) same++;
      for (const stale of this.rendered.splice(same)) stale.node.parentNode?.removeChild(stale.node);
      for (const html of blocks.slice(same)) {
        const full = nodeOf(html);
        const node = shellOf(full);
        this.container.append(node);
        this.rendered.push({ html, full, node, filled: false });
      }
      this.onRender(this);
    }

    /** Put the text into every unfilled block. @returns {boolean} whether any text was added */
    fill() {
      let added = false;
      for (const entry of this.rendered) {
        if (entry.filled) continue;
        entry.filled = true;
        entry.node.parentNode?.replaceChild(entry.full, entry.node);
        entry.node = entry.full;
        added = true;
      }
      return added;
    }

    get hasText() {
      return (this.container.textContent || '').trim().length > 0;
    }
  }

  // ---- the sites' answer streams --------------------------------------------------------------

  /** @param {unknown} value @returns {value is Record<string, any>} */
  const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

  /** @param {string} path @returns {string[]} JSON-pointer tokens */
  const pointer = (path) =>
    path.split('/').slice(1).map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));

  /**
   * ChatGPT's "v1" delta encoding (SITE-FACTS C7.3), applied to the document it builds:
   * `{message, conversation_id}`. A delta is `{p, o, v}`: `add`/`replace` at path "" sets the
   * whole document; `append` (strings concatenate, arrays extend, objects merge), `replace`,
   * `add`, `remove`, `truncate` act at a JSON-pointer path; `patch` applies a list of deltas;
   * a delta without `p`/`o` repeats the last path and op (`{"v": "text"}`). A bare
   * `{v: {message}}` or `{message}` (older streams) sets the document too.
   */
  class DeltaDocument {
    constructor() {
      /** @type {Record<string, any>|null} */
      this.doc = null;
      this.path = '';
      this.op = '';
    }

    /** @param {Record<string, any>} delta @returns {boolean} whether the document changed */
    apply(delta) {
      if (!('p' in delta) && !('o' in delta)) {
        if (isObject(delta.v) && isObject(delta.v.message)) {
          delta = { p: '', o: 'add', v: delta.v };
        } else if (isObject(delta.message)) {
          delta = { p: '', o: 'add', v: delta };
        }
      }
      const path = typeof delta.p === 'string' ? delta.p : this.path;
      const op = typeof delta.o === 'string' ? delta.o : (this.op || 'append');
      if (op === 'patch') {
        let changed = false;
        for (const part of Array.isArray(delta.v) ? delta.v : []) {
          if (isObject(part)) changed = this.apply(part) || changed;
        }
        return changed;
      }
      this.path = path;
      this.op = op;
      if (path === '') {
        if ((op === 'add' || op === 'replace') && isObject(delta.v)) {
          this.doc = structuredClone(delta.v);
          return true;
        }
        return false;
      }
      if (!this.doc) return false;
      const keys = pointer(path);
      const last = keys.pop();
      if (last === undefined) return false;
      /** @type {any} */
      let parent = this.doc;
      for (const key of keys) {
        if (parent[key] === undefined || parent[key] === null) parent[key] = {};
        parent = parent[key];
        if (typeof parent !== 'object') return false;
      }
      const current = parent[last];
      if (op === 'append') {
        if (typeof current === 'string') parent[last] = current + String(delta.v);
        else if (Array.isArray(current)) current.push(...(Array.isArray(delta.v) ? delta.v : [delta.v]));
        else if (isObject(current) && isObject(delta.v)) Object.assign(current, delta.v);
        else parent[last] = delta.v;
      } else if (op === 'replace' || op === 'add') {
        if (Array.isArray(parent) && last === '-') parent.push(delta.v);
        else parent[last] = delta.v;
      } else if (op === 'remove') {
        if (Array.isArray(parent)) parent.splice(Number(last), 1);
        else delete parent[last];
      } else if (op === 'truncate') {
        if (typeof current !== 'string' && !Array.isArray(current)) return false;
        parent[last] = current.slice(0, Number(delta.v));
      } else {
        return false;
      }
      return true;
    }
  }

  /** @param {string} text @returns {any} the JSON value, undefined if it is not JSON */
  function parseJson(text) {
    try {
      return JSON.parse(text);
    } catch (error) {
      return undefined;
    }
  }

  /**
   * Gemini's response body (SITE-FACTS G7.2): `)]}'`, then `<n>\n<json>` frames. The length
   * is read as HYG counts it (UTF-16 code units after the digits, both newlines included),
   * which also finds the frame when a server counts from after the first newline; failing
   * that (a byte count, say), a frame is a JSON line.
   */
  class FrameReader {
    constructor() {
      this.buffer = '';
      this.prefixDone = false;
    }

    /** @param {string} text more of the body @returns {any[]} the frames now complete */
    push(text) {
      this.buffer += text;
      const frames = [];
      if (!this.prefixDone) {
        const start = this.buffer.trimStart();
        if (start.length < 4 && ")]}'".startsWith(start)) return frames;
        if (start.startsWith(")]}'")) this.buffer = start.slice(4);
        this.prefixDone = true;
      }
      while (true) {
        const digits = /^\s*(\d+)/.exec(this.buffer);
        if (!digits || digits[0].length === this.buffer.length) break;
        const from = digits[0].length;
        const byLength = from + Number(digits[1]);
        let parsed = byLength <= this.buffer.length
          ? parseJson(this.buffer.slice(from, byLength)) : undefined;
        let next = byLength;
        if (parsed === undefined) {
          const lineStart = this.buffer[from] === '\n' ? from + 1 : from;
          const lineEnd = this.buffer.indexOf('\n', lineStart);
          if (lineEnd < 0) break;
          parsed = parseJson(this.buffer.slice(lineStart, lineEnd));
          next = lineEnd + 1;
          if (parsed === undefined && byLength <= this.buffer.length) {
            this.buffer = this.buffer.slice(next); // not a frame: skip the line
            continue;
          }
          if (parsed === undefined) break;
        }
        frames.push(parsed);
        this.buffer = this.buffer.slice(next);
      }
      return frames;
    }
  }

  /** @param {HTMLElement} root @returns {string} the text of an editor's paragraphs
   * (ProseMirror and Quill both keep one <p> per line) */
  function readParagraphs(root) {
    /** @type {string[]} */
    const lines = [];
    let current = '';
    /** @param {Node} node */
    const walk = (node) => {
      for (const child of Array.from(node.childNodes)) {
        if (child.nodeType === Node.TEXT_NODE) {
          current += /** @type {Text} */ (child).data;
        } else if (child.nodeName === 'BR') {
          if (child.nextSibling) current += '\n'; // a last <br> only holds an empty line open
        } else if (/^(P|DIV|H[1-6]|LI|PRE)$/.test(child.nodeName)) {
          if (current) lines.push(current);
          current = '';
          walk(child);
          lines.push(current);
          current = '';
        } else {
          walk(child);
        }
      }
    };
    walk(root);
    if (current) lines.push(current);
    return lines.join('\n').replace(/\u00a0/g, ' ');
  }

  /**
   * Upload a file to the fake server (POST /__fake/upload; the real sites upload elsewhere:
   * Gemini to content-push.googleapis.com [G7.5], ChatGPT undocumented). Resolves with the
   * server's {id, name, size}, which the page then sends with the question.
   * @param {File} file @returns {Promise<{id: string, name: string, size: number}>}
   */
  async function uploadFile(file) {
    const response = await fetch('/__fake/upload', {
      method: 'POST',
      headers: {
        'content-type': file.type || 'application/octet-stream',
        'x-fake-file-name': encodeURIComponent(file.name),
      },
      body: file,
    });
    if (!response.ok) throw new Error(`upload failed: HTTP ${response.status}`);
    return response.json();
  }

  /** Read a fetch body as text pieces as they arrive. @param {Response} response */
  async function* textChunks(response) {
    if (!response.body) return;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      yield decoder.decode(value, { stream: true });
    }
    const rest = decoder.decode();
    if (rest) yield rest;
  }

  return { config, nowEpoch, report, el, svgIcon, copyText, renderMarkdown, MarkdownView,
    readParagraphs, textChunks, isObject, parseJson, DeltaDocument, FrameReader, uploadFile };
})();
