// @ts-check
// Shared by both fake sites: page config, DOM helpers, the markdown renderer, and the reports
// that tell the fake server when the DOM showed something. Plain script, no build step.
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
   * navigation still arrive.
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
   * @param {...(Node|string)} children
   * @returns {HTMLElement}
   */
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === false || value === null || value === undefined) continue;
      node.setAttribute(name, value === true ? '' : value);
    }
    node.append(...children);
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

  /** An <img> icon whose alt is a language-independent name, as Gemini's are. */
  function imgIcon(name) {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"><title>${name}</title>` +
      '<rect x="3" y="3" width="14" height="14" rx="3" fill="#666"/></svg>';
    return el('img', { alt: name, width: '20', height: '20',
      src: 'data:image/svg+xml,' + encodeURIComponent(svg) });
  }

  // ---- markdown: the same subset as bridge/fakes/behaviour.py's answer_lines -----------------

  /**
   * @typedef {{type: 'p'|'h'|'ul'|'ol'|'code', start: number, end: number, level?: number,
   *            lang?: string, text?: string, lines?: string[],
 *            items?: {text: string, start: number, end: number}[]}} Block
   */

  /** @param {string} markdown @returns {Block[]} blocks with their source offsets */
  function parseMarkdown(markdown) {
    /** @type {Block[]} */
    const blocks = [];
    /** @type {Block|null} */
    let paragraph = null;
    /** @type {Block|null} */
    let list = null;
    /** @type {Block|null} */
    let code = null;
    let offset = 0;
    const closeParagraph = () => { paragraph = null; };
    const closeList = () => { list = null; };
    for (const line of markdown.split('\n')) {
      const start = offset;
      const end = offset + line.length;
      offset = end + 1;
      if (line.startsWith('```')) {
        if (code) {
          code.end = end;
          code = null;
        } else {
          closeParagraph();
          closeList();
          code = { type: 'code', start, end, lang: line.slice(3).trim(), text: '', lines: [] };
          blocks.push(code);
        }
        continue;
      }
      if (code) {
        code.lines?.push(line);
        code.text = (code.lines || []).join('\n');
        code.end = end;
        continue;
      }
      if (!line.trim()) {
        closeParagraph();
        closeList();
        continue;
      }
      const heading = /^(#{1,6})\s+(.*)$/.exec(line);
      if (heading) {
        closeParagraph();
        closeList();
        blocks.push({ type: 'h', level: heading[1].length, text: heading[2], start, end });
        continue;
      }
      const item = /^([-*]|\d+\.)\s+(.*)$/.exec(line);
      if (item) {
        closeParagraph();
        const type = /\d/.test(item[1]) ? 'ol' : 'ul';
        if (!list || list.type !== type) {
          list = { type, start, end, items: [] };
          blocks.push(list);
        }
        list.items?.push({ text: item[2], start, end });
        list.end = end;
        continue;
      }
      closeList();
      if (paragraph) {
        paragraph.text += ' ' + line.trim();
        paragraph.end = end;
      } else {
        paragraph = { type: 'p', text: line.trim(), start, end };
        blocks.push(paragraph);
      }
    }
    return blocks;
  }

  /** @param {HTMLElement} target @param {string} text: **bold** and `code` spans */
  function fillInline(target, text) {
    const pattern = /\*\*(.+?)\*\*|`([^`]+)`/g;
    let last = 0;
    for (const match of text.matchAll(pattern)) {
      const index = match.index || 0;
      if (index > last) target.append(text.slice(last, index));
      target.append(match[1] !== undefined ? el('strong', {}, match[1]) : el('code', {}, match[2]));
      last = index + match[0].length;
    }
    if (last < text.length) target.append(text.slice(last));
  }

  /** @param {Block} block */
  function blockKey(block) {
    return JSON.stringify([block.type, block.start, block.end, block.items?.length]);
  }

  /**
   * Renders streaming markdown into a container, re-rendering only blocks that changed.
   *
   * Block elements (with data-start/data-end, as ChatGPT's have) are created at once; their text
   * is filled in separately by fill(). ChatGPT's pages fill text from an animation frame, and
   * Chromium runs no animation frames in a hidden page: that is the background-tab quirk.
   */
  class MarkdownView {
    /** @param {HTMLElement} container */
    constructor(container) {
      this.container = container;
      this.markdown = '';
      /** @type {{key: string, block: Block, node: HTMLElement, filled: boolean}[]} */
      this.rendered = [];
    }

    /** Render the block structure of `markdown`; text stays unfilled until fill(). */
    update(markdown) {
      this.markdown = markdown;
      const blocks = parseMarkdown(markdown);
      let same = 0;
      while (same < blocks.length && same < this.rendered.length &&
             this.rendered[same].key === blockKey(blocks[same])) same++;
      for (const stale of this.rendered.splice(same)) stale.node.remove();
      for (const block of blocks.slice(same)) {
        const node = this.shell(block);
        this.container.append(node);
        this.rendered.push({ key: blockKey(block), block, node, filled: false });
      }
    }

    /** @param {Block} block @returns {HTMLElement} the block's element, without text */
    shell(block) {
      const range = { 'data-start': String(block.start), 'data-end': String(block.end) };
      if (block.type === 'h') return el(`h${block.level}`, range);
      if (block.type === 'code') {
        return el('pre', range, el('code', { class: block.lang ? `language-${block.lang}` : null }));
      }
      if (block.type === 'ul' || block.type === 'ol') {
        return el(block.type, range, ...(block.items || []).map((item) =>
          el('li', { 'data-start': String(item.start), 'data-end': String(item.end) })));
      }
      return el('p', range);
    }

    /** Put the text into every unfilled block. @returns {boolean} whether any text was added */
    fill() {
      let added = false;
      for (const entry of this.rendered) {
        if (entry.filled) continue;
        entry.filled = true;
        const { block, node } = entry;
        if (block.type === 'code') {
          const codeNode = /** @type {HTMLElement} */ (node.firstChild);
          codeNode.textContent = block.text || '';
        } else if (block.type === 'ul' || block.type === 'ol') {
          (block.items || []).forEach((item, index) => {
            fillInline(/** @type {HTMLElement} */ (node.children[index]), item.text);
          });
        } else {
          fillInline(node, block.text || '');
        }
        added = true;
      }
      return added;
    }

    get hasText() {
      return (this.container.textContent || '').trim().length > 0;
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

  return { config, nowEpoch, report, el, svgIcon, imgIcon, parseMarkdown, MarkdownView,
    readParagraphs, textChunks };
})();
