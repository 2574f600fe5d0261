// @ts-check
// Shared by both fake sites: page config, DOM helpers, the markdown renderer, the clipboard
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

  // ---- markdown: the GFM subset bridge/fakes/behaviour.py's answer_lines describes ----------
  //
  // Blocks: paragraphs (soft breaks become spaces; two trailing spaces or a backslash make a
  // <br>), ATX headings, fenced code (``` or ~~~, an unclosed fence runs to the end: that is
  // how a streaming answer looks), indented code (4 columns, tabs to stops of 4), display math
  // ($$ or \[ on its own line, or a whole line $$…$$), thematic breaks, blockquotes, lists
  // (bullet or ordered, nested by indentation to the item's content column, task items,
  // tight or loose), and pipe tables. Inline: code spans, math (\( \), $$ $$, $ $), images,
  // links, <autolinks>, **strong**/__strong__, *em*/_em_, ~~del~~, backslash escapes, and
  // &entities; in text. Not supported, on purpose: setext headings (a `---` line is always a
  // break), raw HTML (shown as text), reference links. The Python side mirrors every rule.

  /** @typedef {{text: string, start: number}} Line a source line, its offset in the markdown */
  /**
   * @typedef {{type: 'p', start: number, end: number, inline: string}
   *   | {type: 'h', start: number, end: number, level: number, inline: string}
   *   | {type: 'code', start: number, end: number, lang: string, text: string}
   *   | {type: 'math', start: number, end: number, tex: string}
   *   | {type: 'hr', start: number, end: number}
   *   | {type: 'quote', start: number, end: number, children: Block[]}
   *   | {type: 'list', start: number, end: number, ordered: boolean, first: number,
   *      tight: boolean, items: Item[]}
   *   | {type: 'table', start: number, end: number, align: string[], header: string[],
   *      rows: string[][]}} Block
   * @typedef {{start: number, end: number, task: null|boolean, children: Block[]}} Item
   */

  const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
  const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
  const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;
  const QUOTE = /^ {0,3}> ?/;
  const LIST_ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(?:( +)(.*))?$/;
  const TASK = /^\[([ xX])\](?:[ \t]+|$)/;
  const MATH_OPEN = /^ {0,3}(\$\$|\\\[)[ \t]*$/;
  const MATH_LINE = /^ {0,3}(?:\$\$(.*\S.*)\$\$|\\\[(.*\S.*)\\\])[ \t]*$/;
  const DELIMITER_CELL = /^:?-+:?$/;

  /** @param {string} text */
  const isBlank = (text) => !text.trim();
  /** @param {string} text */
  const indentOf = (text) => (/^ */.exec(text) || [''])[0].length;
  /** @param {Line} line @param {number} count */
  const dropIndent = (line, count) => {
    const cut = Math.min(count, indentOf(line.text));
    return { text: line.text.slice(cut), start: line.start + cut };
  };
  /** @param {Line} line */
  const lineEnd = (line) => line.start + line.text.length;

  /** @param {string} row @returns {string[]} the cells of a table row */
  function splitCells(row) {
    let text = row.trim();
    if (text.startsWith('|')) text = text.slice(1);
    if (text.endsWith('|') && !text.endsWith('\\|')) text = text.slice(0, -1);
    return text.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, '|'));
  }

  /** @param {Line[]} lines @param {number} i */
  function tableStarts(lines, i) {
    if (i + 1 >= lines.length || !lines[i].text.includes('|')) return false;
    const delimiter = lines[i + 1].text;
    if (!delimiter.includes('-') || indentOf(delimiter) > 3) return false;
    const cells = splitCells(delimiter);
    return cells.every((cell) => DELIMITER_CELL.test(cell)) &&
      cells.length === splitCells(lines[i].text).length;
  }

  /**
   * @param {string} text
   * @returns {{kind: string, ordered: boolean, number: number, contentIndent: number,
   *            content: string}|null}
   */
  function listMarker(text) {
    if (HR.test(text)) return null;
    const match = LIST_ITEM.exec(text);
    if (!match) return null;
    const indent = match[1].length;
    const marker = match[2];
    const ordered = /\d/.test(marker);
    let contentIndent;
    let content;
    if (match[3] === undefined) {
      contentIndent = indent + marker.length + 1;
      content = '';
    } else if (match[3].length > 4) {
      contentIndent = indent + marker.length + 1;
      content = match[3].slice(1) + match[4];
    } else {
      contentIndent = indent + marker.length + match[3].length;
      content = match[4];
    }
    return {
      kind: ordered ? 'o' + marker.slice(-1) : 'u' + marker,
      ordered, number: ordered ? parseInt(marker, 10) : 0, contentIndent, content,
    };
  }

  /** @param {string} text @returns {RegExpExecArray|null} an opening code fence */
  function fenceOf(text) {
    const fence = FENCE.exec(text);
    return fence && !(fence[2][0] === '`' && fence[3].includes('`')) ? fence : null;
  }

  /** @param {string} text whether the line starts a block other than a table */
  function startsOtherBlock(text) {
    return fenceOf(text) !== null || HR.test(text) || HEADING.test(text) || QUOTE.test(text) ||
      MATH_OPEN.test(text) || MATH_LINE.test(text) || listMarker(text) !== null;
  }

  /** @param {Line[]} lines @param {number} i whether line i starts a block (ends a paragraph) */
  function blockStarts(lines, i) {
    return startsOtherBlock(lines[i].text) || tableStarts(lines, i);
  }

  /** @param {string} text @returns {string} leading tabs expanded to stops of 4 columns */
  function expandTabs(text) {
    const lead = (/^[ \t]*/.exec(text) || [''])[0];
    if (!lead.includes('\t')) return text;
    let column = 0;
    for (const char of lead) column = char === '\t' ? column + 4 - (column % 4) : column + 1;
    return ' '.repeat(column) + text.slice(lead.length);
  }

  /** @param {string} markdown @returns {Block[]} blocks with their source offsets */
  function parseMarkdown(markdown) {
    /** @type {Line[]} */
    const lines = [];
    let offset = 0;
    for (const text of markdown.split('\n')) {
      lines.push({ text: expandTabs(text), start: offset });
      offset += text.length + 1;
    }
    return parseBlocks(lines);
  }

  /**
   * A paragraph's lines as one inline text: a soft break is a space, a hard one (two trailing
   * spaces, or a backslash) a "\n", which fillInline renders as <br>.
   * @param {string[]} lines
   */
  function joinParagraph(lines) {
    let text = '';
    lines.forEach((line, index) => {
      let part = line.trim();
      let separator = ' ';
      if (index < lines.length - 1) {
        if (/ {2,}$/.test(line)) {
          separator = '\n';
        } else if (/(?<!\\)(?:\\\\)*\\$/.test(part)) {
          part = part.slice(0, -1).trimEnd();
          separator = '\n';
        }
      }
      text += part + (index < lines.length - 1 ? separator : '');
    });
    return text;
  }

  /** @param {Line[]} lines @returns {Block[]} */
  function parseBlocks(lines) {
    /** @type {Block[]} */
    const blocks = [];
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      const text = line.text;
      if (isBlank(text)) {
        i++;
        continue;
      }
      if (indentOf(text) >= 4) {
        const body = [];
        let end = lineEnd(line);
        while (i < lines.length && (isBlank(lines[i].text) || indentOf(lines[i].text) >= 4)) {
          body.push(dropIndent(lines[i], 4).text);
          if (!isBlank(lines[i].text)) end = lineEnd(lines[i]);
          i++;
        }
        while (body.length && isBlank(body[body.length - 1])) body.pop();
        blocks.push({ type: 'code', start: line.start, end, lang: '', text: body.join('\n') });
        continue;
      }
      const fence = fenceOf(text);
      if (fence) {
        const indent = fence[1].length;
        const marker = fence[2];
        const body = [];
        let end = lineEnd(line);
        i++;
        while (i < lines.length) {
          const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(lines[i].text);
          if (close && close[1][0] === marker[0] && close[1].length >= marker.length) {
            end = lineEnd(lines[i]);
            i++;
            break;
          }
          body.push(dropIndent(lines[i], indent).text);
          end = lineEnd(lines[i]);
          i++;
        }
        const lang = fence[3].trim().split(/\s+/)[0] || '';
        blocks.push({ type: 'code', start: line.start, end, lang, text: body.join('\n') });
        continue;
      }
      const mathLine = MATH_LINE.exec(text);
      if (mathLine) {
        const tex = (mathLine[1] ?? mathLine[2] ?? '').trim();
        blocks.push({ type: 'math', start: line.start, end: lineEnd(line), tex });
        i++;
        continue;
      }
      const mathOpen = MATH_OPEN.exec(text);
      if (mathOpen) {
        const closer = mathOpen[1] === '$$' ? '$$' : '\\]';
        const body = [];
        let end = lineEnd(line);
        i++;
        while (i < lines.length) {
          const inner = lines[i].text;
          end = lineEnd(lines[i]);
          i++;
          if (inner.trimEnd().endsWith(closer)) {
            body.push(inner.trimEnd().slice(0, -closer.length));
            break;
          }
          body.push(inner);
        }
        blocks.push({ type: 'math', start: line.start, end, tex: body.join('\n').trim() });
        continue;
      }
      if (HR.test(text)) {
        blocks.push({ type: 'hr', start: line.start, end: lineEnd(line) });
        i++;
        continue;
      }
      const heading = HEADING.exec(text);
      if (heading) {
        const inline = (heading[2] || '').replace(/(?:^|[ \t]+)#+[ \t]*$/, '').trim();
        blocks.push({
          type: 'h', level: heading[1].length, inline, start: line.start, end: lineEnd(line),
        });
        i++;
        continue;
      }
      if (QUOTE.test(text)) {
        /** @type {Line[]} */
        const inner = [];
        while (i < lines.length && QUOTE.test(lines[i].text)) {
          const prefix = (QUOTE.exec(lines[i].text) || [''])[0].length;
          inner.push({ text: lines[i].text.slice(prefix), start: lines[i].start + prefix });
          i++;
        }
        blocks.push({
          type: 'quote', start: line.start, end: lineEnd(lines[i - 1]),
          children: parseBlocks(inner),
        });
        continue;
      }
      if (tableStarts(lines, i)) {
        const header = splitCells(text);
        const align = splitCells(lines[i + 1].text).map((cell) =>
          cell.endsWith(':') ? (cell.startsWith(':') ? 'center' : 'right')
            : (cell.startsWith(':') ? 'left' : ''));
        /** @type {string[][]} */
        const rows = [];
        let end = lineEnd(lines[i + 1]);
        i += 2;
        while (i < lines.length && !isBlank(lines[i].text) && lines[i].text.includes('|') &&
               !startsOtherBlock(lines[i].text)) {
          const cells = splitCells(lines[i].text);
          rows.push(header.map((_, index) => cells[index] ?? ''));
          end = lineEnd(lines[i]);
          i++;
        }
        blocks.push({ type: 'table', start: line.start, end, align, header, rows });
        continue;
      }
      const marker = listMarker(text);
      if (marker) {
        const [list, next] = parseList(lines, i, marker);
        blocks.push(list);
        i = next;
        continue;
      }
      const paragraph = [text];
      let end = lineEnd(line);
      i++;
      while (i < lines.length && !isBlank(lines[i].text) && !blockStarts(lines, i)) {
        paragraph.push(lines[i].text);
        end = lineEnd(lines[i]);
        i++;
      }
      blocks.push({ type: 'p', start: line.start, end, inline: joinParagraph(paragraph) });
    }
    return blocks;
  }

  /**
   * @param {Line[]} lines @param {number} i
   * @param {NonNullable<ReturnType<typeof listMarker>>} first
   * @returns {[Block, number]}
   */
  function parseList(lines, i, first) {
    /** @type {Item[]} */
    const items = [];
    let tight = true;
    while (i < lines.length) {
      const marker = listMarker(lines[i].text);
      if (!marker || marker.kind !== first.kind) break;
      const line = lines[i];
      let content = marker.content;
      let contentStart = line.start + line.text.length - content.length;
      /** @type {boolean|null} */
      let task = null;
      const box = TASK.exec(content);
      if (box) {
        task = box[1] !== ' ';
        content = content.slice(box[0].length);
        contentStart += box[0].length;
      }
      /** @type {Line[]} */
      const itemLines = [{ text: content, start: contentStart }];
      let j = i + 1;
      while (j < lines.length) {
        const text = lines[j].text;
        if (isBlank(text)) {
          let k = j;
          while (k < lines.length && isBlank(lines[k].text)) k++;
          if (k < lines.length && indentOf(lines[k].text) >= marker.contentIndent) {
            for (; j < k; j++) itemLines.push({ text: '', start: lines[j].start });
            tight = false;
            continue;
          }
          break;
        }
        if (indentOf(text) >= marker.contentIndent) {
          itemLines.push(dropIndent(lines[j], marker.contentIndent));
          j++;
          continue;
        }
        // A lazy continuation line of the item's paragraph.
        if (!isBlank(itemLines[itemLines.length - 1].text) && !blockStarts(lines, j)) {
          itemLines.push(dropIndent(lines[j], indentOf(text)));
          j++;
          continue;
        }
        break;
      }
      items.push({
        start: line.start, end: lineEnd(itemLines[itemLines.length - 1]), task,
        children: parseBlocks(itemLines),
      });
      i = j;
      let k = i;
      while (k < lines.length && isBlank(lines[k].text)) k++;
      if (k > i && k < lines.length) {
        const next = listMarker(lines[k].text);
        if (next && next.kind === first.kind) {
          tight = false;
          i = k;
          continue;
        }
        break;
      }
    }
    const list = {
      type: /** @type {'list'} */ ('list'), start: items[0].start,
      end: items[items.length - 1].end, ordered: first.ordered, first: first.number, tight,
      items,
    };
    return [list, i];
  }

  // Inline spans, tried left to right; the first alternative that matches at a position wins.
  const INLINE = new RegExp([
    '(?<!`)(?<tick>`+)(?!`)(?<code>.+?)(?<!`)\\k<tick>(?!`)',
    '\\\\\\((?<mathParen>.+?)\\\\\\)',
    '\\$\\$(?<mathDollars>.+?)\\$\\$',
    '(?<![\\\\$])\\$(?<mathDollar>[^\\s$](?:[^$]*?[^\\s$\\\\])?)\\$(?![\\d$])',
    '!\\[(?<alt>[^\\]]*)\\]\\((?<src>[^()\\s]*)(?:\\s+"[^"]*")?\\)',
    '\\[(?<label>[^\\]]+)\\]\\((?<href>[^()\\s]*)(?:\\s+"[^"]*")?\\)',
    '<(?<autolink>https?://[^>\\s]+)>',
    '\\*\\*(?=\\S)(?<strong>.+?)(?<=\\S)\\*\\*',
    '__(?=\\S)(?<strong2>.+?)(?<=\\S)__',
    '~~(?=\\S)(?<del>.+?)(?<=\\S)~~',
    '\\*(?=[^\\s*])(?<em>.+?)(?<=[^\\s*])\\*',
    '(?<![A-Za-z0-9])_(?=[^\\s_])(?<em2>.+?)(?<=[^\\s_])_(?![A-Za-z0-9])',
    '\\\\(?<escaped>[!-/:-@\\[-`{-~])',
  ].join('|'), 'g');

  /**
   * KaTeX's output for `tex`, reduced: the MathML copy whose annotation holds the TeX source,
   * and the visual copy (aria-hidden). KaTeX's own class names; the visual copy shows the
   * source instead of typeset glyphs.
   * @param {string} tex @param {boolean} display
   */
  function katex(tex, display) {
    const ns = 'http://www.w3.org/1998/Math/MathML';
    const math = document.createElementNS(ns, 'math');
    if (display) math.setAttribute('display', 'block');
    const semantics = document.createElementNS(ns, 'semantics');
    const mrow = document.createElementNS(ns, 'mrow');
    const mtext = document.createElementNS(ns, 'mtext');
    mtext.textContent = tex;
    mrow.append(mtext);
    const annotation = document.createElementNS(ns, 'annotation');
    annotation.setAttribute('encoding', 'application/x-tex');
    annotation.textContent = tex;
    semantics.append(mrow, annotation);
    math.append(semantics);
    const node = el('span', { class: 'katex' },
      el('span', { class: 'katex-mathml' }, math),
      el('span', { class: 'katex-html', 'aria-hidden': 'true' }, tex));
    return display ? el('span', { class: 'katex-display' }, node) : node;
  }

  const ENTITY = /&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/g;
  const entityDecoder = document.createElement('textarea');

  /** @param {HTMLElement} target @param {string} text plain text: entities decoded, a "\n"
   * (hard break) as <br> */
  function appendText(target, text) {
    const decoded = text.replace(ENTITY, (entity) => {
      entityDecoder.innerHTML = entity;
      return entityDecoder.value;
    });
    decoded.split('\n').forEach((part, index) => {
      if (index > 0) target.append(el('br'));
      if (part) target.append(part);
    });
  }

  /** @param {HTMLElement} target @param {string} text: inline markdown appended as DOM */
  function fillInline(target, text) {
    let last = 0;
    for (const match of text.matchAll(INLINE)) {
      const index = match.index || 0;
      if (index > last) appendText(target, text.slice(last, index));
      last = index + match[0].length;
      const g = match.groups || {};
      if (g.code !== undefined) {
        target.append(el('code', {}, g.code));
      } else if (g.mathParen !== undefined || g.mathDollars !== undefined ||
                 g.mathDollar !== undefined) {
        const tex = g.mathParen ?? g.mathDollars ?? g.mathDollar ?? '';
        target.append(katex(tex.replace(/\n/g, ' ').trim(), false));
      } else if (g.alt !== undefined) {
        target.append(el('img', { alt: g.alt, src: g.src }));
      } else if (g.label !== undefined) {
        const link = el('a', { href: g.href, target: '_blank', rel: 'noopener' });
        fillInline(link, g.label);
        target.append(link);
      } else if (g.autolink !== undefined) {
        target.append(el('a', { href: g.autolink, target: '_blank', rel: 'noopener' },
          g.autolink));
      } else if (g.escaped !== undefined) {
        target.append(g.escaped);
      } else {
        const tag = g.strong !== undefined || g.strong2 !== undefined ? 'strong'
          : g.del !== undefined ? 'del' : 'em';
        const node = el(tag);
        fillInline(node, g.strong ?? g.strong2 ?? g.del ?? g.em ?? g.em2 ?? '');
        target.append(node);
      }
    }
    if (last < text.length) appendText(target, text.slice(last));
  }

  /**
   * How a site dresses its markdown.
   * - chatgpt: every block element carries data-start/data-end (its source offsets); a code
   *   block's <pre> holds a header (language label, "Copy code" button) above the <code>.
   * - gemini: code blocks are div.code-block with the label in .code-block-decoration
   *   (SITE-FACTS G2.4) above <pre><code>.
   * @typedef {{site: 'chatgpt'|'gemini', copyCode?: string}} Flavor
   */

  /** @param {Block|Item} block @param {Flavor} flavor */
  function range(block, flavor) {
    return flavor.site === 'chatgpt'
      ? { 'data-start': String(block.start), 'data-end': String(block.end) } : {};
  }

  /**
   * @param {string} lang @param {string} code @param {Flavor} flavor
   * @param {Record<string, string>} attrs
   */
  function codeBlock(lang, code, flavor, attrs) {
    const codeNode = el('code', { class: lang ? `language-${lang}` : null }, code);
    if (flavor.site === 'gemini') {
      return el('div', { class: 'code-block', ...attrs },
        lang ? el('div', { class: 'code-block-decoration' }, el('span', {}, lang)) : null,
        el('pre', {}, codeNode));
    }
    // The header is the brief's (language label and "Copy code" above the code); its markup
    // is not in the evidence, so it is plain elements. "Copy code" copies this block only.
    const copy = el('button', { type: 'button' }, flavor.copyCode || 'Copy code');
    copy.addEventListener('click', () => copyText(code));
    return el('pre', attrs, el('div', {}, lang ? el('div', {}, lang) : null, copy), codeNode);
  }

  /** @param {Block} block @param {Flavor} flavor @returns {HTMLElement} the block, with text */
  function renderBlock(block, flavor) {
    const attrs = range(block, flavor);
    switch (block.type) {
      case 'h': {
        const node = el(`h${block.level}`, attrs);
        fillInline(node, block.inline);
        return node;
      }
      case 'code':
        return codeBlock(block.lang, block.text, flavor, attrs);
      case 'math':
        return el('div', attrs, katex(block.tex, true));
      case 'hr':
        return el('hr', attrs);
      case 'quote':
        return el('blockquote', attrs, ...block.children.map((child) => renderBlock(child, flavor)));
      case 'table': {
        /** @param {string} tag @param {string[]} cells */
        const row = (tag, cells) => el('tr', {}, ...cells.map((cell, index) => {
          const node = el(tag, { style: block.align[index] ? `text-align: ${block.align[index]}` : null });
          fillInline(node, cell);
          return node;
        }));
        return el('table', attrs, el('thead', {}, row('th', block.header)),
          block.rows.length ? el('tbody', {}, ...block.rows.map((cells) => row('td', cells))) : null);
      }
      case 'list': {
        const list = el(block.ordered ? 'ol' : 'ul', {
          ...attrs, start: block.ordered && block.first !== 1 ? String(block.first) : null,
        });
        for (const item of block.items) {
          const li = el('li', range(item, flavor));
          if (item.task !== null) {
            li.append(el('input', { type: 'checkbox', disabled: true, checked: item.task }));
          }
          let children = item.children;
          const head = children[0];
          if (block.tight && head && head.type === 'p') {
            fillInline(li, head.inline);
            children = children.slice(1);
          }
          li.append(...children.map((child) => renderBlock(child, flavor)));
          list.append(li);
        }
        return list;
      }
      default: {
        const node = el('p', attrs);
        fillInline(node, block.inline);
        return node;
      }
    }
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
   * Renders streaming markdown into a container, re-rendering only top-level blocks that
   * changed.
   *
   * Block elements are created at once but as bare shells (ChatGPT's carry data-start and
   * data-end); their text arrives with fill(). ChatGPT's page fills text from an animation
   * frame, and Chromium runs no animation frames in a hidden page: that is the background-tab
   * quirk (docs/sites.md#background-tab). Gemini's page fills at once.
   */
  class MarkdownView {
    /** @param {HTMLElement} container @param {Flavor} [flavor] */
    constructor(container, flavor = { site: 'chatgpt' }) {
      this.container = container;
      this.flavor = flavor;
      this.markdown = '';
      /** @type {{key: string, full: Node, node: Node, filled: boolean}[]} */
      this.rendered = [];
    }

    /** Render the block structure of `markdown`; text stays unfilled until fill(). */
    update(markdown) {
      this.markdown = markdown;
      const blocks = parseMarkdown(markdown);
      /** @param {Block} block */
      const keyOf = (block) => `${block.type}:${block.start}:${markdown.slice(block.start, block.end)}`;
      let same = 0;
      while (same < blocks.length && same < this.rendered.length &&
             this.rendered[same].key === keyOf(blocks[same])) same++;
      for (const stale of this.rendered.splice(same)) stale.node.parentNode?.removeChild(stale.node);
      for (const block of blocks.slice(same)) {
        const full = renderBlock(block, this.flavor);
        const node = shellOf(full);
        this.container.append(node);
        this.rendered.push({ key: keyOf(block), full, node, filled: false });
      }
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

  return { config, nowEpoch, report, el, svgIcon, copyText, parseMarkdown, MarkdownView,
    readParagraphs, textChunks, isObject, parseJson, DeltaDocument, FrameReader, uploadFile };
})();
