// @ts-check
// Injected into chatgpt.com / gemini.google.com tabs by bridge (Runtime.evaluate), once per
// document. It only reads the page and performs the input steps the drivers ask for; every
// decision (completion, fallbacks, retries) is made in Python.
//
// What it knows about each site comes from the provider packs (bridge/providers/packs/*.json,
// docs/sites.md#provider-packs), substituted for __BRIDGE_PACKS__ when the script is built: the
// code below is generic (one `site` per pack), and the per-provider hooks only name the
// observation fields the Python detectors read. Both sites are queried in the light DOM only
// (ChatGPT: SITE-FACTS C2.9; Gemini: G2.8, docs/sites.md#gemini-shadow-dom).
(() => {
  const VERSION = '__BRIDGE_PAGE_VERSION__';
  if (window.__bridgePage && window.__bridgePage.version === VERSION) return VERSION;
  const PACKS = __BRIDGE_PACKS__;

  // ---- the packs, checked once with the browser's own parsers ---------------------------------

  /** Problems found in the packs here (a selector Chromium rejects, a regex JS rejects). */
  const packErrors = [];
  const probe = document.createDocumentFragment();

  function validSelector(provider, name, s) {
    try {
      probe.querySelector(s);
      return true;
    } catch (e) {
      packErrors.push(`${provider}: selectors.${name}: ${JSON.stringify(s)} is not a valid selector`);
      return false;
    }
  }

  function compile(provider, name, spec) {
    if (!spec) return null;
    try {
      return new RegExp(spec[0], spec[1] || '');
    } catch (e) {
      packErrors.push(`${provider}: ${name}: ${/** @type {Error} */ (e).message}`);
      return null;
    }
  }

  function prepare(provider, data) {
    const sel = {};
    for (const [name, list] of Object.entries(data.selectors)) {
      const ok = list.filter((s) => validSelector(provider, name, s));
      if (ok.length) sel[name] = ok;
    }
    const re = {};
    for (const [name, spec] of Object.entries(data.regex)) {
      const r = compile(provider, `texts.${name}`, spec);
      if (r) re[name] = r;
    }
    return {
      provider,
      fingerprint: data.fingerprint,
      sel,
      texts: data.texts,
      re,
      flow: data.flow,
      conversationPath: compile(provider, 'urls.conversation_path', data.urls.conversation_path),
      loginPath: compile(provider, 'urls.login_path', data.urls.login_path),
      loginHosts: data.urls.login_hosts || [],
    };
  }

  // ---- DOM helpers --------------------------------------------------------------------------

  const last = (list) => (list.length ? list[list.length - 1] : null);
  const isDisabled = (el) =>
    !!el && (el.disabled === true || el.getAttribute('aria-disabled') === 'true');
  const norm = (s) => (s || '').replace(/\s+/g, '');
  const joined = (list) => list.join(', ');

  /**
   * Whole-document query results that are still true: set by ``watch`` while it builds a
   * report, and kept from one report to the next only while every mutation in between was
   * inside the newest answer's text (a streamed chunk cannot add a button, a dialog or a
   * message outside it). A query over a 1 MB conversation costs about a millisecond, and a
   * report makes a dozen of them: without this, each streamed chunk would cost bridge time
   * in proportion to the conversation's length (bridge.bench.page_cost measures it).
   */
  let queryCache = null;
  /** The watch's index of whole-document queries (``makeIndex``), or null outside a watch. */
  let queryIndex = null;
  function queryAll(root, selector) {
    if (root !== document || !queryCache) return [...root.querySelectorAll(selector)];
    let hit = queryCache.get(selector);
    if (!hit) {
      hit = queryIndex ? queryIndex.get(selector) : [...document.querySelectorAll(selector)];
      queryCache.set(selector, hit);
    }
    return hit;
  }

  /**
   * Selectors whose matches only the elements' own tags, ids, classes and attributes and
   * those of their ancestors decide: what the index can keep true from mutation records.
   * Anything else (sibling combinators, :has(), state pseudo-classes) is queried afresh.
   */
  const indexable = (selector) =>
    /^[\w\s,>#.*-]*$/.test(selector.replace(/\[(?:[^\]"']|"[^"]*"|'[^']*')*\]/g, ''));

  /**
   * Whole-document query results kept true by mutation records, so that a report that
   * looks at the whole page (a button appeared, a turn was added) costs in proportion to
   * what changed, not to the conversation's length (bridge.bench.page_cost: a dozen
   * whole-document queries over a 1 MB conversation took about 60 ms a report). Each
   * selector's list is built by one query when first asked for, then updated: an added
   * subtree is queried alone, an element whose attributes changed is checked with its
   * subtree (an ancestor's attribute can decide a descendant's match), removed elements
   * leave. The lists stay in document order (``last`` is the newest). Records are applied
   * lazily, when a list is next asked for: a streamed chunk costs a few set inserts.
   *
   * Made by the first watch of a document and kept for the next asks in it (a long
   * conversation is asked in again and again: only the first ask pays the whole-page
   * queries). Between asks its observer only notes what changed; it lets go of the page
   * (``INDEX_MAX_PENDING``) when that piles up with nobody asking, so an idle tab the person
   * keeps using holds no growing memory.
   */
  const INDEX_MAX_PENDING = 20000;
  /** @type {ReturnType<typeof makeIndex> | null} */
  let docIndex = null;
  function makeIndex() {
    /** @type {Map<string, Element[]>} */
    const lists = new Map();
    /** @type {Set<Element>} */
    const added = new Set();
    /** @type {Set<Element>} */
    const changed = new Set();
    let removed = false;
    /** Each control's labels (``labelsOf``), read once while nothing in it changes: the skip
     * control is looked for among every button of the page (C4.4 does not say where). */
    /** @type {WeakMap<Element, string[]>} */
    const labels = new WeakMap();
    const mo = new MutationObserver((batch) => note(batch));
    mo.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
    const before = (a, b) => !!(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
    /** Insert el into the ordered list (binary search: a page has hundreds of buttons). */
    function insert(list, el) {
      let lo = 0;
      let hi = list.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (before(list[mid], el)) lo = mid + 1;
        else hi = mid;
      }
      if (list[lo] !== el) list.splice(lo, 0, el);
    }
    /** The roots among els that no other of them contains (their subtrees hold the rest). */
    function topmost(els) {
      const set = new Set(els);
      return [...set].filter((el) => {
        if (!el.isConnected) return false;
        for (let up = el.parentElement; up; up = up.parentElement) if (set.has(up)) return false;
        return true;
      });
    }
    function sync() {
      note(mo.takeRecords()); // what happened since the last callback, this very task included
      if (!added.size && !changed.size && !removed) return;
      const roots = topmost([...added, ...changed]);
      for (const [selector, list] of lists) {
        // Gone from the page, or no longer matching after an attribute changed (its own or
        // an ancestor's): a check of each listed element, cheap next to a query.
        const kept = list.filter((el) => el.isConnected && (!changed.size || el.matches(selector)));
        if (kept.length !== list.length) list.splice(0, list.length, ...kept);
        const had = new Set(list);
        for (const root of roots) {
          if (root.matches(selector) && !had.has(root)) {
            insert(list, root);
            had.add(root);
          }
          for (const el of root.querySelectorAll(selector)) {
            if (!had.has(el)) {
              insert(list, el);
              had.add(el);
            }
          }
        }
      }
      added.clear();
      changed.clear();
      removed = false;
    }
    /** Take mutation records into account (applied when a list is next asked for). */
    function note(records) {
        for (const r of records) {
          // A change inside an element changes its text: its labels and its ancestors' are
          // read again when next asked for.
          const at = r.target.nodeType === Node.ELEMENT_NODE ? /** @type {Element} */ (r.target) : r.target.parentElement;
          for (let el = at; el; el = el.parentElement) labels.delete(el);
          if (r.type === 'childList') {
            for (const n of r.addedNodes) {
              if (n.nodeType !== Node.ELEMENT_NODE) continue;
              const el = /** @type {Element} */ (n);
              added.add(el);
              // Changed while out of the page, where no record told of it: read afresh.
              labels.delete(el);
              for (const inner of el.getElementsByTagName('*')) labels.delete(inner);
            }
            if (r.removedNodes.length) removed = true;
          } else if (r.type === 'attributes' && r.target.nodeType === Node.ELEMENT_NODE) {
            changed.add(/** @type {Element} */ (r.target));
          }
        }
        if (added.size + changed.size > INDEX_MAX_PENDING) stop();
    }
    /** Let go of the page: the next watch builds the lists afresh. */
    function stop() {
      mo.disconnect();
      if (docIndex === index) docIndex = null;
    }
    const index = {
      /** The labels of a control (``labelsOf``), kept while nothing in it changes. */
      labels(el) {
        note(mo.takeRecords());
        let have = labels.get(el);
        if (!have) {
          have = labelsOf(el);
          labels.set(el, have);
        }
        return have;
      },
      /** The document's elements matching selector, in document order (shared: read only). */
      get(selector) {
        if (!indexable(selector)) return [...document.querySelectorAll(selector)];
        sync();
        let list = lists.get(selector);
        if (!list) {
          list = [...document.querySelectorAll(selector)];
          lists.set(selector, list);
        }
        return list;
      },
    };
    return index;
  }

  /** Every element matching any selector of the list, in document order, each once. The
   * array may be shared (see queryCache): callers never change it. */
  function all(list, root = document) {
    if (!list || !root) return [];
    return queryAll(root, joined(list));
  }
  /** Ordered candidates: the newest element of the first selector that matches. */
  function firstOf(list, root = document) {
    if (!list) return null;
    for (const s of list) {
      const found = last(queryAll(root, s));
      if (found) return found;
    }
    return null;
  }
  const matchesAny = (el, list) => !!list && !!el && el.matches(joined(list));
  const closestOf = (el, list) => (list && el ? el.closest(joined(list)) : null);
  /** An icon (mat-icon) or wrapper stands for the button it sits in. */
  const asButton = (el) => el.closest('button') || el;
  const visible = (el) =>
    !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';

  // Texts are compared the way the evidence quotes them (SITE-FACTS "How to read this"): case,
  // spaces (textContent joins paragraphs without one) and curly apostrophes do not matter;
  // `bare` also drops final punctuation.
  const canon = (s) => (s || '').replace(/[\u2018\u2019\u02bc]/g, "'").replace(/\s+/g, '').toLowerCase();
  const bare = (s) => canon(s).replace(/[.!?。！？…]+$/u, '');
  const controlText = (el) =>
    `${el.getAttribute('aria-label') || ''} ${el.getAttribute('data-testid') || ''} ${el.getAttribute('title') || ''} ${el.textContent || ''}`;

  /** A control labelled exactly with one of the texts (as the evidence quotes the labels):
   * its aria-label, title or visible text, compared by `bare`. Exact, so "フィードバックを送信"
   * is no "送信" and a container of many controls is none of them. */
  function labelIs(el, texts) {
    const have = queryIndex ? queryIndex.labels(el) : labelsOf(el);
    const wanted = bareTexts.get(texts) || texts.map(bare);
    bareTexts.set(texts, wanted);
    return wanted.some((t) => have.includes(t));
  }
  /** Each list of a pack's texts compared by ``bare``: worked out once, not per control. */
  /** @type {WeakMap<string[], string[]>} */
  const bareTexts = new WeakMap();
  const labelsOf = (el) =>
    [el.getAttribute('aria-label'), el.getAttribute('title'), el.textContent].map(bare).filter(Boolean);

  /**
   * The known text ``text`` is, if any: equal to one (see canon/bare), or starting with one
   * that the evidence quotes cut off with "…". With ``loose``, starting with any is enough.
   */
  function knownText(text, known, loose) {
    const have = bare(text);
    if (!have || !known) return '';
    for (const k of known) {
      const want = bare(k);
      if (!want) continue;
      const cut = /(…|\.\.\.)\s*$/.test(k);
      if (have === want || ((cut || loose) && have.startsWith(want))) return k;
    }
    return '';
  }

  /** Text of an input: textarea value, else its paragraphs. */
  function inputText(el) {
    if (!el) return '';
    if (el.tagName === 'TEXTAREA') return el.value;
    const paras = el.querySelectorAll('p');
    if (paras.length) return [...paras].map((p) => p.textContent || '').join('\n').trim();
    return (el.textContent || '').trim();
  }

  // ---- markdown from rendered answers ----------------------------------------------------------
  //
  // The last-resort source: a rendered answer (ChatGPT's `.markdown` [C2.4], Gemini's
  // `div.markdown` [G2.4]) turned back into the markdown it was rendered from, as closely as the
  // DOM allows. Where the source's choice leaves no trace in the DOM, the commonest form is
  // written: `-` bullets, `*em*`, `**strong**`, `---` rules, backtick fences, `$…$` inline math
  // and `$$` lines around display math, `<url>` for a link whose text is its address, two
  // trailing spaces for a hard break. Buttons (a code block's "Copy code"), a code block's
  // language label and KaTeX's glyph copies are never answer text.

  /** Elements that hold no answer text. */
  const SKIPPED = new Set(['BUTTON', 'SCRIPT', 'STYLE', 'TEMPLATE', 'NOSCRIPT', 'svg', 'SVG']);
  /** Elements that start a block of their own; other elements (and custom ones) are inline
   * unless they hold one of these. */
  const BLOCKS = new Set([
    'P', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'UL', 'OL', 'PRE', 'BLOCKQUOTE', 'TABLE', 'HR',
    'DIV', 'SECTION', 'ARTICLE', 'HEADER', 'FOOTER', 'MAIN', 'ASIDE', 'NAV', 'FIGURE',
    'FIGCAPTION', 'DETAILS', 'SUMMARY', 'DL', 'DT', 'DD', 'LI', 'ADDRESS', 'FORM', 'FIELDSET',
  ]);
  const BLOCK_SELECTOR = 'p, h1, h2, h3, h4, h5, h6, ul, ol, pre, blockquote, table, hr, div';
  const TEX = 'annotation[encoding="application/x-tex"]';

  const isElement = (node) => node.nodeType === Node.ELEMENT_NODE;
  const hasClass = (el, name) => !!el.classList && el.classList.contains(name);
  const isBlock = (el) =>
    BLOCKS.has(el.tagName) || (el.tagName.includes('-') && !!el.querySelector(BLOCK_SELECTOR));
  /** The longest run of backticks in text. */
  const longestTicks = (text) => Math.max(0, ...(text.match(/`+/g) || []).map((r) => r.length));

  /** KaTeX (and any MathML with a TeX annotation): its TeX source, else null. */
  function texOf(el) {
    const note = el.querySelector(TEX);
    if (note) return (note.textContent || '').trim();
    const mathml = el.querySelector('.katex-mathml, math');
    return mathml ? (mathml.textContent || '').trim() : null;
  }
  const isMath = (el) =>
    hasClass(el, 'katex') || hasClass(el, 'katex-display') || el.localName === 'math';

  // Text that the markdown would read as markup gets a backslash, and only that text: a `*`,
  // `_` or `~~` pair that would be emphasis, a backtick pair that would be code, a `$` pair
  // that would be math, a `\` before punctuation, `[…](…)` that would be a link. A lone `*`
  // between spaces ("2 * 3") or a price ("$5 and $10") is left as the source most likely had it.
  const ESCAPES = [
    /`[^`]+`/g, // paired backticks
    /\*(?=[^\s*])[^*]*?[^\s*]\*|\*\*(?=\S)[^*]*?\S\*\*/g, // *em* / **strong**
    /(?<![A-Za-z0-9_])_(?=[^\s_])[^_]*?[^\s_]_(?![A-Za-z0-9_])|__(?=\S)[^_]*?\S__/g,
    /~~(?=\S)[^~]*?\S~~/g,
    /(?<![\\$])\$(?=[^\s$])[^$]*?[^\s$\\]\$(?![\d$])/g, // $math$
  ];
  // CommonMark's flanking rules: a run of `*`, `_` or `~` opens emphasis only when
  // left-flanking and closes it only when right-flanking (punctuation is Unicode P or S). A
  // pair the rules cannot read as emphasis (`：**量子（キュービット）**は`: the closer sits
  // between a bracket and a letter) shows as written and needs no escape.
  const PUNCTUATION = /[\p{P}\p{S}]/u;
  const SPACE = /\s/u;
  /** The character (a whole code point) at `i`, a space past either end. */
  const charAt = (/** @type {string} */ text, /** @type {number} */ i) =>
    i >= 0 && i < text.length ? String.fromCodePoint(/** @type {number} */ (text.codePointAt(i))) : ' ';
  /** The character before `i` (a surrogate pair read whole). */
  const charBefore = (/** @type {string} */ text, /** @type {number} */ i) =>
    charAt(text, i > 1 && /[\udc00-\udfff]/.test(text[i - 1]) ? i - 2 : i - 1);
  /**
   * Whether the run text[start, end) is left- (opening) or right-flanking (closing).
   * @param {string} text @param {number} start @param {number} end @param {boolean} opening
   */
  function flanking(text, start, end, opening) {
    const [near, far] = opening
      ? [charAt(text, end), charBefore(text, start)]
      : [charBefore(text, start), charAt(text, end)];
    return !SPACE.test(near) && (!PUNCTUATION.test(near) || SPACE.test(far) || PUNCTUATION.test(far));
  }

  function escapeText(text) {
    let out = text.replace(/\\(?=[!-/:-@[-`{-~])/g, '\\\\');
    for (const re of ESCAPES) {
      out = out.replace(re, (m, at, whole) => {
        // Both match: every pattern above starts and ends with a marker.
        const lead = /** @type {RegExpExecArray} */ (/^[`*_~$]+/.exec(m))[0];
        const tail = /** @type {RegExpExecArray} */ (/[`*_~$]+$/.exec(m))[0];
        const end = at + m.length;
        if (/^[*_~]/.test(lead) && !(flanking(whole, at, at + lead.length, true) &&
            flanking(whole, end - tail.length, end, false))) return m;
        const esc = (s) => s.replace(/[`*_~$]/g, '\\$&');
        return esc(lead) + m.slice(lead.length, m.length - tail.length) + esc(tail);
      });
    }
    // [text](url) that the markdown would read as a link.
    return out.replace(/\[(?=[^\]]+\]\([^()\s]*(?:\s+"[^"]*")?\))/g, '\\[');
  }

  /** Emphasis markers around content, whitespace kept outside (where markdown needs it). */
  function wrap(marker, content) {
    // Matches any string.
    const m = /** @type {RegExpExecArray} */ (/^(\s*)([\s\S]*?)(\s*)$/.exec(content));
    return m[2] ? `${m[1]}${marker}${m[2]}${marker}${m[3]}` : content;
  }

  /** Whether a link's parentheses pair up (else the destination goes in <…>). */
  function balanced(href) {
    let depth = 0;
    for (const c of href) {
      depth += c === '(' ? 1 : c === ')' ? -1 : 0;
      if (depth < 0) return false;
    }
    return depth === 0;
  }

  /** An inline code span: more backticks than any run inside, spaced if it starts or ends
   * with one. */
  function codeSpan(text) {
    const ticks = '`'.repeat(longestTicks(text) + 1);
    const pad = /^`|`$/.test(text) ? ' ' : '';
    return ticks + pad + text + pad + ticks;
  }

  /** Markdown of one inline node (a block inside inline content is converted as a block). */
  function inlineNode(node) {
    if (node.nodeType === Node.TEXT_NODE) return escapeText(node.textContent);
    if (!isElement(node) || SKIPPED.has(node.tagName)) return '';
    const el = node;
    if (isMath(el)) {
      const tex = texOf(el);
      if (tex === null) return '';
      const display = hasClass(el, 'katex-display') || el.closest('.katex-display') ||
        el.getAttribute('display') === 'block';
      return display ? `\n$$\n${tex}\n$$\n` : `$${tex}$`;
    }
    switch (el.tagName) {
      case 'BR':
        return '  \n';
      case 'CODE':
        return codeSpan(el.textContent || '');
      case 'KBD': // only raw HTML in the source makes one
        return `<kbd>${inlineText(el)}</kbd>`;
      case 'STRONG':
      case 'B':
        return wrap('**', inlineText(el));
      case 'EM':
      case 'I':
        return wrap('*', inlineText(el));
      case 'DEL':
      case 'S':
      case 'STRIKE':
        return wrap('~~', inlineText(el));
      case 'IMG':
        return `![${el.getAttribute('alt') || ''}](${el.getAttribute('src') || ''})`;
      case 'INPUT':
        return el.type === 'checkbox' ? (el.checked ? '[x] ' : '[ ] ') : '';
      case 'A': {
        const href = el.getAttribute('href') || '';
        const text = inlineText(el);
        if (!href) return text;
        const shown = el.textContent || '';
        const auto = shown === href || `mailto:${shown}` === href;
        if (auto && !el.querySelector('*')) return `<${shown}>`;
        const title = el.getAttribute('title');
        const target = /\s/.test(href) || !balanced(href) ? `<${href}>` : href;
        return `[${text}](${target}${title ? ` "${title.replace(/"/g, '\\"')}"` : ''})`;
      }
      default:
        return isBlock(el) ? blockMarkdown(el) : inlineText(el);
    }
  }

  /** The markdown of inline nodes; neighbouring text nodes are escaped as one text. */
  function inlineOf(nodes) {
    let out = '';
    let text = '';
    // Right after a task box ("[x] "), whose space is written already, or a <br>, whose line
    // break is: the whitespace a renderer puts there (CommonMark renderers write "<br>\n")
    // shows nothing, and written out it would end the paragraph.
    let lead = false;
    for (const node of nodes) {
      if (node.nodeType === Node.TEXT_NODE) {
        text += lead && !text ? node.textContent.replace(/^\s+/, '') : node.textContent;
        continue;
      }
      out += escapeText(text) + inlineNode(node);
      text = '';
      lead = (node.tagName === 'INPUT' && node.type === 'checkbox') || node.tagName === 'BR';
    }
    return out + escapeText(text);
  }

  /** The markdown of an element's inline content (its children). */
  function inlineText(el) {
    return inlineOf(el.childNodes);
  }

  /** A paragraph's inline markdown; a first character that would start a block is escaped. */
  function paragraph(nodes) {
    const text = inlineOf(nodes).trim();
    const first = nodes.find((n) => n.nodeType !== Node.TEXT_NODE || n.textContent.trim());
    if (!first || first.nodeType !== Node.TEXT_NODE) return text;
    return text.replace(/^(#{1,6}(?=\s|$)|>|[-+*](?=\s)|\d{1,9}(?=[.)]\s))/, (m) =>
      /^\d/.test(m) ? m + '\\' : '\\' + m);
  }

  /** The markdown blocks of an element's children: runs of inline content are paragraphs. */
  function blocksOf(el) {
    const blocks = [];
    let run = [];
    const flush = () => {
      const text = paragraph(run);
      if (text) blocks.push(text);
      run = [];
    };
    for (const node of el.childNodes) {
      if (isElement(node) && SKIPPED.has(node.tagName)) continue;
      if (isElement(node) && (isBlock(node) || hasClass(node, 'katex-display'))) {
        flush();
        const text = blockMarkdown(node);
        if (text.trim()) blocks.push(text);
      } else {
        run.push(node);
      }
    }
    flush();
    return blocks;
  }

  /** Prefix the first line, indent the others (blank lines stay empty). */
  function indented(text, first, rest) {
    return text
      .split('\n')
      .map((line, i) => (i === 0 ? first + line : line ? rest + line : ''))
      .join('\n');
  }

  /** A list: `-` bullets or numbers from `start`, task boxes, items' further lines indented
   * to the content column, blank lines between the items of a loose list. */
  function listMarkdown(list) {
    const ordered = list.tagName === 'OL';
    const items = [...list.children].filter((c) => c.tagName === 'LI');
    // Loose when an item holds paragraphs (the renderers' <li><p>): blank lines between.
    const loose = items.some((li) => [...li.children].some((c) => c.tagName === 'P'));
    let n = Number.parseInt(list.getAttribute('start') || '1', 10);
    if (!Number.isFinite(n)) n = 1;
    const out = items.map((li) => {
      const marker = ordered ? `${n++}.` : '-';
      const body = blocksOf(li).join(loose ? '\n\n' : '\n');
      return indented(body, `${marker} `, ' '.repeat(marker.length + 1)).replace(/ +$/, '');
    });
    return out.join(loose ? '\n\n' : '\n');
  }

  /** The language a code element names in its classes (language-x, lang-x), else ''. */
  const languageOf = (el) =>
    (el && (/(?:^|\s)lang(?:uage)?-([^\s]+)/.exec(el.getAttribute('class') || '') || [])[1]) || '';

  /** The code block's label (ChatGPT's header, Gemini's .code-block-decoration): its text
   * outside the code and the buttons, first word, as a fence's language. */
  function labelOf(block, code) {
    const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
    let text = '';
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      const host = t.parentElement;
      if (code.contains(t) || (host && host.closest('button'))) continue;
      text += ' ' + t.textContent;
    }
    return (text.trim().split(/\s+/)[0] || '').toLowerCase();
  }

  /** A fenced code block from a <pre> (ChatGPT: header and code inside) or a wrapper holding
   * one (Gemini: .code-block with its label above the <pre>). */
  function codeMarkdown(block) {
    const pre = block.tagName === 'PRE' ? block : block.querySelector('pre') || block;
    const code = pre.querySelector('code') || pre;
    const lang =
      languageOf(code) || languageOf(pre) || pre.getAttribute('data-language') ||
      (code !== block ? labelOf(block, code) : '');
    let body = '';
    if (code === pre) {
      const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
      for (let t = walker.nextNode(); t; t = walker.nextNode()) {
        if (!(t.parentElement && t.parentElement.closest('button'))) body += t.textContent;
      }
    } else {
      body = code.textContent || '';
    }
    body = body.replace(/\n$/, '');
    const fence = '`'.repeat(Math.max(3, longestTicks(body) + 1));
    return `${fence}${lang}\n${body}\n${fence}`;
  }

  /** A code block: a <pre>, or a plain wrapper (a div, a custom element) with one <pre> and
   * no other blocks. */
  const isCodeBlock = (el) =>
    el.tagName === 'PRE' ||
    ((el.tagName === 'DIV' || el.tagName === 'FIGURE' || el.tagName.includes('-')) &&
      el.querySelectorAll('pre').length === 1 &&
      !el.querySelector('p, ul, ol, table, blockquote, h1, h2, h3, h4, h5, h6, hr, .katex'));

  /** A GFM table: the first row is the header, then the delimiter row with its alignment. */
  function tableMarkdown(table) {
    const rows = [...table.querySelectorAll('tr')].filter((tr) => tr.closest('table') === table);
    if (!rows.length) return '';
    // One line per row: a break is a space, and every | is escaped (inside code spans too).
    const cell = (c) => inlineText(c).trim().replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
    const line = (tr) => `| ${[...tr.cells].map(cell).join(' | ')} |`;
    const head = rows[0];
    const align = [...head.cells].map((c) => {
      const a = (c.style.textAlign || c.getAttribute('align') || '').toLowerCase();
      return a === 'left' ? ':---' : a === 'center' ? ':---:' : a === 'right' ? '---:' : '---';
    });
    return [line(head), `|${align.join('|')}|`, ...rows.slice(1).map(line)].join('\n');
  }

  /** Markdown of one block element. */
  function blockMarkdown(el) {
    if (hasClass(el, 'katex-display')) return inlineNode(el).trim();
    if (isCodeBlock(el)) return codeMarkdown(el);
    switch (el.tagName) {
      case 'UL':
      case 'OL':
        return listMarkdown(el);
      case 'BLOCKQUOTE':
        return blocksOf(el)
          .join('\n\n')
          .split('\n')
          .map((l) => (l ? `> ${l}` : '>'))
          .join('\n');
      case 'TABLE':
        return tableMarkdown(el);
      case 'HR':
        return '---';
      case 'P':
        return paragraph([...el.childNodes]);
      default:
        if (/^H[1-6]$/.test(el.tagName)) {
          const text = inlineText(el).trim().replace(/\s*\n\s*/g, ' ');
          return `${'#'.repeat(Number(el.tagName[1]))} ${text}`;
        }
        return blocksOf(el).join('\n\n');
    }
  }

  /** Markdown of a rendered answer container (its blocks, blank lines between). */
  function toMarkdown(root) {
    return blocksOf(root).join('\n\n').trim();
  }

  // ---- one site, from its pack ----------------------------------------------------------------

  /** Longer replies are never compared with the error texts (all of which are short). */
  const ERROR_MAX_CHARS = 1000;

  function makeSite(pk) {
    const S = pk.sel;
    const T = pk.texts;
    const R = pk.re;
    const F = pk.flow;
    const messages = [...(S.user_message || []), ...(S.assistant_message || []), ...(S.turn || [])];

    const site = {
      pack: pk,
      input: () => firstOf(S.input),
      users: () => all(S.user_message),
      answers: () => all(S.assistant_message),
      newestAnswer: () => last(site.answers()),
      /** The turn wrapper of a message (an article or a section, C2.1), else the message. */
      turnOf: (a) => (a && closestOf(a, S.turn)) || a,
      inMessage: (el) => !!closestOf(el, messages),
      inChrome: (el) => !!closestOf(el, S.chrome),
      /** Read-aloud / dictation / voice controls (C1.12): never send, never stop. */
      excluded: (el) => !!R.control_exclude && R.control_exclude.test(controlText(el)),

      /** Buttons labelled with one of the texts, in the composer scope, outside messages. */
      labelButtons(texts) {
        if (!texts) return [];
        const scopes = S.composer_scope ? all(S.composer_scope) : [document];
        const out = new Set();
        for (const scope of scopes) {
          for (const b of scope.querySelectorAll('button')) {
            if (labelIs(b, texts) && !site.excluded(b) && !site.inMessage(b)) out.add(b);
          }
        }
        return [...out];
      },
      stopButtons() {
        const direct = all(S.stop_button).map(asButton).filter((b) => !site.excluded(b));
        return direct.length ? direct : site.labelButtons(T.stop_labels);
      },
      stopButton: () => last(site.stopButtons()),
      isVoice: (b) => matchesAny(b, S.speech_button) || site.excluded(b),
      sendButton() {
        const stops = new Set(site.stopButtons());
        const ok = (b) => !stops.has(b) && !site.isVoice(b);
        const direct = all(S.send_button).map(asButton).filter(ok);
        if (direct.length) return last(direct);
        return last(site.labelButtons(T.send_labels).filter(ok));
      },
      speechButton: () => last(all(S.speech_button)),
      /** A mic selector only where a pack has one; Gemini's is undocumented (G1.4). */
      micButton() {
        const b = last(all(S.mic_button).map(asButton));
        return b && visible(b) ? b : null;
      },
      skipButton() {
        if (!T.skip_thinking_labels) return null;
        // Every button's label is read: kept with the report's cached queries (queryCache).
        const key = '\u0000skipButton';
        if (queryCache && queryCache.has(key)) return queryCache.get(key);
        const found = last(queryAll(document, 'button').filter((b) => labelIs(b, T.skip_thinking_labels)));
        if (queryCache) queryCache.set(key, found);
        return found;
      },

      /** The answer container in a message: the first selector that has one outside chrome. */
      answerIn(a, list) {
        if (!a || !list) return null;
        for (const s of list) {
          const found = last([...a.querySelectorAll(s)].filter((el) => !site.inChrome(el)));
          if (found) return found;
        }
        return null;
      },
      /** A copy of el without buttons and the site's chrome (hidden headings, thoughts). */
      cleaned(el) {
        const copy = el.cloneNode(true);
        const drop = ['button', ...(S.chrome || [])];
        for (const x of copy.querySelectorAll(joined(drop))) x.remove();
        return copy;
      },
      /** Readable text of el without buttons and chrome (blocks on their own lines). */
      textOf(el) {
        if (!el) return '';
        const copy = site.cleaned(el);
        for (const b of copy.querySelectorAll('p, div, li, pre, tr, br, blockquote, section, article, h1, h2, h3, h4, h5, h6')) {
          b.append('\n');
        }
        return (copy.textContent || '').replace(/[ \t]*\n\s*/g, '\n').trim();
      },
      /** The whole reply of a message, as a person reads it; '' when longer than max
       * characters (a notice or an error text is short: long answers cost no copy). */
      replyText(a, max = Infinity) {
        if (!a) return '';
        const el = site.answerIn(a, S.answer) || site.answerIn(a, S.answer_fallback) || a;
        if ((el.textContent || '').length > max) return '';
        return site.textOf(el);
      },

      // -- thinking (docs/sites.md#chatgpt-thinking) --
      /** A status label (a whole text outside the answer) or a shimmer in the turn (C4.1). */
      thinkingStatus(turn) {
        if (!turn) return false;
        if (all(S.thinking_status, turn).length) return true;
        if (!T.thinking_labels) return false;
        const wanted = new Set(T.thinking_labels.map(bare));
        const walker = document.createTreeWalker(turn, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          if (!wanted.has(bare(n.textContent))) continue;
          const host = n.parentElement;
          if (host && !closestOf(host, S.answer)) return true;
        }
        return false;
      },
      disclosures: (turn) => (turn ? [...turn.querySelectorAll('button, [aria-expanded]')] : []),
      /** "Thought for 12s" / 思考時間 (C4.2): it stays after thinking is done. */
      thinkingSummary(turn) {
        if (!R.thinking_summary) return false;
        return site.disclosures(turn).some((b) => R.thinking_summary.test(`${b.getAttribute('aria-label') || ''} ${b.textContent || ''}`));
      },
      /** "Thinking failed" / "Stopped thinking" with no answer (C3.6): the label, else ''. */
      thinkingFailed(turn, a) {
        if (!T.thinking_failed || !turn) return '';
        const hit = site.disclosures(turn).find((b) => knownText(b.textContent, T.thinking_failed, true));
        if (!hit) return '';
        const md = site.answerIn(a, S.answer);
        return md && site.textOf(md) ? '' : hit.textContent.trim();
      },

      // -- notices (docs/sites.md#rate-limit, #error-turn, #login-wall, #challenge) --
      rateLimit() {
        const re = R.rate_limit;
        if (!re) return '';
        for (const el of all(S.rate_limit_surface)) {
          // An answer that talks about rate limits is no notice: skip what holds messages.
          if (site.inMessage(el) || (messages.length && el.querySelector(joined(messages)))) continue;
          // textContent to test (no layout on every report); to show, the notice without
          // its controls ("Got it").
          if (re.test(el.textContent || '')) {
            const shown = el.cloneNode(true);
            for (const b of shown.querySelectorAll('button')) b.remove();
            return (shown.textContent || '').replace(/\s+/g, ' ').trim();
          }
        }
        if (F.rate_limit_in_reply) {
          const max = F.reply_notice_max_chars || Infinity;
          const text = site.replyText(site.newestAnswer(), max);
          if (text && text.length <= max && re.test(text)) return text;
        }
        return '';
      },
      /** The reset time a limit notice states ("after 3:45 PM", "in 2 hours"), else ''. */
      resetOf(notice) {
        const m = notice && R.rate_limit_reset ? R.rate_limit_reset.exec(notice) : null;
        if (!m) return '';
        return (m.slice(1).find((g) => g) || m[0]).trim();
      },
      /** The newest answer when it is an error text of the evidence, not an answer. */
      errorTurn() {
        const a = site.newestAnswer();
        if (!a) return '';
        const failed = site.thinkingFailed(site.turnOf(a), a);
        if (failed) return failed;
        if (!T.error_replies) return '';
        const text = site.replyText(a, ERROR_MAX_CHARS);
        if (knownText(text, T.error_replies, false)) return text;
        // With a Regenerate button up (C2.8), an error text with more after it counts too.
        if (S.regenerate && all(S.regenerate).length && knownText(text, T.error_replies, true)) return text;
        return '';
      },
      /**
       * Gemini's Deep Think placeholder reply (G10.2: "generating your response", "check back
       * later", "I'm on it"): the newest reply, short (flow.reply_notice_max_chars), holding
       * one of texts.deep_think_pending. It looks finished but is not the answer; '' else.
       */
      placeholderReply() {
        if (!T.deep_think_pending) return '';
        const max = F.reply_notice_max_chars || ERROR_MAX_CHARS;
        const text = site.replyText(site.newestAnswer(), max);
        if (!text || text.length > max) return '';
        const have = canon(text);
        return T.deep_think_pending.find((k) => bare(k) && have.includes(bare(k))) || '';
      },
      loginWall() {
        if (pk.loginHosts.includes(location.hostname)) return true;
        if (pk.loginPath && pk.loginPath.test(location.pathname)) return true;
        if (!all(S.login_cta).some(visible)) return false;
        if (F.login_requires_no_composer && site.input()) return false;
        return !all(S.logged_in).length;
      },
      /**
       * Cloudflare's interstitial in front of a site (docs/sites.md#challenge, C5.5): its
       * titles, its own element ids and frame, or its texts, on a page without the site's
       * composer. Its challenge-platform script alone is no sign (ChatGPT loads it on normal
       * pages too), so it is in no pack.
       */
      challenge() {
        if (site.input()) return false;
        if (R.challenge_title && R.challenge_title.test(document.title.trim())) return true;
        if (all(S.challenge).length) return true;
        const text = document.body ? document.body.innerText || '' : '';
        return !!R.challenge_body && R.challenge_body.test(text);
      },

      /** Everything a detector may want, under generic names (hooks rename them). */
      signals() {
        const answers = site.answers();
        const a = last(answers);
        const turn = site.turnOf(a);
        const stop = site.stopButton();
        const send = site.sendButton();
        const input = site.input();
        const inputEmpty = !inputText(input).trim();
        const md = site.answerIn(a, S.answer);
        return {
          users: site.users().length,
          answers: answers.length,
          stop: !!stop,
          sendPresent: !!send,
          sendEnabled: !!send && !isDisabled(send),
          inputEmpty,
          speech: !!site.speechButton() && !stop,
          // No mic selector is evidenced for Gemini (G1.4 only says mic and send swap): the
          // mic slot is idle when the composer is there, empty, with neither send nor stop.
          mic: S.mic_button ? !!site.micButton() : !!input && inputEmpty && !send && !stop,
          skip: !!site.skipButton(),
          thinkingStatus: site.thinkingStatus(turn),
          thinkingSummary: site.thinkingSummary(turn),
          textLen: md ? (md.textContent || '').length : 0,
          actionBar: !!turn && all(S.action_bar, turn).length > 0,
          responseComplete: !!a && all(S.response_complete, a).length > 0,
          feedback:
            !!a && !!T.feedback_labels &&
            [...a.querySelectorAll('button, [role="button"]')].some((b) => labelIs(b, T.feedback_labels)),
          login: site.loginWall(),
          rateLimited: !!site.rateLimit(),
          errorTurn: !!site.errorTurn(),
          placeholder: !!site.placeholderReply(),
        };
      },

      // -- conversations (docs/sites.md#conversations) --
      /** Every rendered message, questions and answers, in document order (a match inside
       * another match is part of it, not a message of its own). */
      messages() {
        const list = [...(S.user_message || []), ...(S.assistant_message || [])];
        return all(list).filter((el) => !(el.parentElement && closestOf(el.parentElement, list)));
      },
      /** One message as a turn: an answer as markdown (as `extract` reads it), a question as
       * its text (one line per `user_text_line` where the pack has them [G2.3]). The key finds
       * it again after a re-render: its message id [C2.3], else its exchange's id [G2.2]. */
      messageTurn(el) {
        const user = matchesAny(el, S.user_message);
        const role = user ? 'user' : 'assistant';
        let text;
        if (user) {
          const lines = all(S.user_text_line, el);
          text = lines.length
            ? lines.map((l) => l.textContent || '').join('\n')
            : site.cleaned(el).textContent || '';
        } else {
          text = STEPS.markdown(site, el) || STEPS.prose(site, el) || site.textOf(el);
        }
        const exchange = closestOf(el, S.exchange);
        const key = el.getAttribute('data-message-id') ||
          (exchange && exchange.id ? `${exchange.id}/${role}` : '');
        return { key, role, text: text.trim() };
      },
      conversationTurns: () => site.messages().map((m) => site.messageTurn(m)),
      /** The history's scroller: the pack's [G2.1], else (by behaviour) the nearest
       * scrolling ancestor of the first message. */
      historyScroller() {
        const named = firstOf(S.history_scroller);
        if (named) return named;
        const first = site.messages()[0];
        for (let el = first ? first.parentElement : null; el; el = el.parentElement) {
          if (/auto|scroll/.test(getComputedStyle(el).overflowY) && el.scrollHeight > el.clientHeight) return el;
        }
        return null;
      },
      /**
       * Links to conversations: the pack's sidebar entries and the links in its sidebar
       * [C5.2]; where it names none, or they hold none, any link on the page to a URL of the
       * pack's urls.conversation_path outside the messages (by behaviour). In page order,
       * each URL once, titled with the link's text without its buttons.
       */
      conversationLinks() {
        const target = (a) => {
          if (!pk.conversationPath || !a) return '';
          let url;
          try {
            url = new URL(a.getAttribute('href') || '', location.href);
          } catch (e) {
            return '';
          }
          url.hash = '';
          return url.origin === location.origin && pk.conversationPath.test(url.pathname) ? url.href : '';
        };
        const items = all(S.conversation_item).map((el) => el.closest('a[href]') || el.querySelector('a[href]'));
        const lists = all(S.conversation_list).flatMap((l) => [...l.querySelectorAll('a[href]')]);
        let anchors = [...new Set([...items, ...lists])].filter((a) => target(a));
        let method = 'sidebar';
        if (!anchors.length) {
          anchors = [...document.querySelectorAll('a[href]')].filter((a) => target(a) && !site.inMessage(a));
          method = 'links';
        }
        anchors.sort((x, y) => (x.compareDocumentPosition(y) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
        const seen = new Set();
        const links = [];
        for (const a of anchors) {
          const url = target(a);
          if (seen.has(url)) continue;
          seen.add(url);
          const text = (site.cleaned(a).textContent || '').replace(/\s+/g, ' ').trim();
          links.push({ title: text || a.getAttribute('title') || a.getAttribute('aria-label') || '', url });
        }
        return { method, links };
      },

      /**
       * What the newest answer's turn generated (docs/sites.md#outputs): whether an image is
       * still loading (the pack's image_loading), its images (generated_image, outside
       * image_exclude: web-search thumbnails) and its file controls (generated_file), in
       * page order, with the message's id for the site's download request.
       */
      outputs() {
        const a = site.newestAnswer();
        const turn = site.turnOf(a);
        if (!a || !turn) return { loading: false, images: [], files: [], messageId: '' };
        const images = all(S.generated_image, turn)
          .filter((img) => !closestOf(img, S.image_exclude))
          .map((img) => ({
            src: img.currentSrc || img.getAttribute('src') || '',
            alt: img.getAttribute('alt') || '',
            loaded: !!img.complete && img.naturalWidth > 0,
          }));
        return {
          loading: all(S.image_loading, turn).length > 0,
          images,
          files: all(S.generated_file, turn).map((b) => (b.textContent || '').trim()),
          messageId: a.getAttribute('data-message-id') || '',
        };
      },

      /** Extraction steps in the pack's order (docs/sites.md#extraction-chatgpt, #extraction-gemini). */
      extract() {
        const a = site.newestAnswer();
        const turn = site.turnOf(a);
        for (const step of F.extraction_steps) {
          const text = STEPS[step] ? STEPS[step](site, a, turn) : '';
          if (text) return { text, method: step };
        }
        return { text: '', method: 'none' };
      },
    };
    return site;
  }

  const containerText = (site, el) => (el ? toMarkdown(site.cleaned(el)) || site.textOf(el) : '');
  const STEPS = {
    /** The pack's answer container in the newest answer, as markdown. */
    markdown: (site, a) => containerText(site, site.answerIn(a, site.pack.sel.answer)),
    /** The pack's fallback containers there. */
    prose: (site, a) => containerText(site, site.answerIn(a, site.pack.sel.answer_fallback)),
    /** The paragraphs of the newest turn. */
    paragraphs(site, a, turn) {
      if (!turn) return '';
      const paras = [...site.cleaned(turn).querySelectorAll('p')];
      return paras.map((p) => inlineText(p).trim()).filter(Boolean).join('\n\n');
    },
    /** The newest turn's text without buttons and chrome. */
    article_text: (site, a, turn) => (turn ? site.textOf(turn) : ''),
    /** The page's text after the last turn label (never within the first 10 characters). */
    body_text(site) {
      const main = document.querySelector('main') || document.body;
      let text = (main.innerText || '').trim();
      for (const marker of site.pack.texts.turn_labels || []) {
        const idx = text.lastIndexOf(marker);
        if (idx > 10) text = text.slice(idx + marker.length);
      }
      return text.trim();
    },
  };

  // ---- per-provider hooks: the observation fields bridge/providers/completion.py reads ---------

  const SHAPES = {
    chatgpt: (s) => ({
      user_count: s.users,
      assistant_count: s.answers,
      has_stop_button: s.stop,
      send_button_present: s.sendPresent,
      send_button_enabled: s.sendEnabled,
      input_empty: s.inputEmpty,
      has_skip_thinking_button: s.skip,
      still_generating_text: s.thinkingStatus,
      thinking_complete_marker: s.thinkingSummary,
      last_assistant_text_len: s.textLen,
      speech_button: s.speech,
      action_bar: s.actionBar,
      login_wall: s.login,
      rate_limited: s.rateLimited,
      error_turn: s.errorTurn,
    }),
    gemini: (s) => ({
      user_count: s.users,
      model_response_count: s.answers,
      has_stop_button: s.stop,
      has_mic_button: s.mic,
      has_feedback_buttons: s.feedback,
      response_complete: s.responseComplete,
      send_button_enabled: s.sendEnabled,
      input_empty: s.inputEmpty,
      last_response_text_len: s.textLen,
      login_wall: s.login,
      rate_limited: s.rateLimited,
      error_turn: s.errorTurn,
      placeholder_reply: s.placeholder,
    }),
  };
  /** A provider without hooks reports the generic signals. */
  const shapeOf = (p) => SHAPES[p] || ((s) => ({ user_count: s.users, answer_count: s.answers, ...s }));

  const sites = {};
  for (const [p, data] of Object.entries(PACKS)) sites[p] = makeSite(prepare(p, data));

  function siteOf(p) {
    const s = sites[p];
    if (!s) throw new Error(`bridge: no provider pack for ${JSON.stringify(p)} (have ${Object.keys(sites).join(', ')})`);
    return s;
  }
  const observe = (p) => shapeOf(p)(siteOf(p).signals());

  // ---- watching -----------------------------------------------------------------------------

  /**
   * Observe the document. ``onChange`` runs at most once per task burst: mutation callbacks
   * arriving before it ran are merged. A MessageChannel task, not a timer: hidden tabs
   * throttle timers to once a second.
   */
  function watchMutations(onChange) {
    const channel = new MessageChannel();
    let scheduled = false;
    let stopped = false;
    let records = [];
    channel.port1.onmessage = () => {
      scheduled = false;
      const seen = records;
      records = [];
      if (!stopped) onChange(seen);
    };
    const mo = new MutationObserver((batch) => {
      for (const r of batch) records.push(r);
      if (!scheduled) {
        scheduled = true;
        channel.port2.postMessage(null);
      }
    });
    mo.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
    return () => {
      if (stopped) return;
      stopped = true;
      mo.disconnect();
      channel.port1.close();
    };
  }

  let stopWatching = null;
  let settled = false;

  const api = {
    version: VERSION,
    /** Fingerprint of each provider's pack this script was built with. */
    packs: Object.fromEntries(Object.entries(PACKS).map(([p, d]) => [p, d.fingerprint])),
    packErrors,
    toMarkdown,
    observe,
    extract: (p) => siteOf(p).extract(),
    outputs: (p) => siteOf(p).outputs(),
    /**
     * The newest turn's outputs once its images are done: no loading skeleton and, when one
     * was seen (``sawLoading``), an image shown (C10.2: the image can come after the
     * skeleton). Re-checked on every mutation; at ``timeoutMs`` what the page shows then.
     */
    whenOutputsSettled(p, sawLoading, timeoutMs) {
      const site = siteOf(p);
      const done = () => {
        const o = site.outputs();
        return !o.loading && (o.images.length > 0 || !sawLoading) ? o : '';
      };
      return waitUntil(done, timeoutMs).then((o) => o || site.outputs());
    },
    /**
     * The bytes at ``url``, fetched by the page with its own credentials (SITE-FACTS C10.7:
     * estuary URLs need the session even with their sig), as base64 with the status and type.
     */
    async fetchOutput(url, maxBytes) {
      const response = await fetch(url, { credentials: 'include' });
      const bytes = new Uint8Array(await response.arrayBuffer());
      if (bytes.length > maxBytes) {
        return { status: response.status, type: '', base64: '', size: bytes.length };
      }
      let binary = '';
      for (let i = 0; i < bytes.length; i += 0x8000) {
        binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      }
      return {
        status: response.status,
        type: response.headers.get('content-type') || '',
        base64: btoa(binary),
        size: bytes.length,
      };
    },
    notices(p) {
      const site = siteOf(p);
      const rateLimit = site.rateLimit();
      return { rateLimit, rateLimitResets: site.resetOf(rateLimit), error: site.errorTurn() };
    },
    counts(p) {
      const site = siteOf(p);
      return { user: site.users().length, assistant: site.answers().length };
    },

    /** Report observe() through the CDP binding whenever it changes (one report per change). */
    watch(p, binding) {
      if (stopWatching) stopWatching();
      api.watchStats = { reports: 0, confined: 0, full: 0, confinedMs: 0, fullMs: 0 };
      let lastSent = '';
      let cache = new Map();
      let text = null; // the newest answer's text container at the last report
      if (!docIndex) docIndex = makeIndex();
      const report = (records) => {
        const started = performance.now();
        const confined = !!records && !!text && text.isConnected &&
          records.every((r) => text.contains(r.target));
        if (!confined) cache = new Map();
        queryCache = cache;
        queryIndex = docIndex;
        try {
          const s = JSON.stringify(observe(p));
          if (s !== lastSent) {
            lastSent = s;
            /** @type {Record<string, any>} */ (window)[binding](s);
          }
          const site = siteOf(p);
          text = site.answerIn(site.newestAnswer(), site.pack.sel.answer);
        } finally {
          queryCache = null;
          queryIndex = null;
          const stats = api.watchStats;
          const ms = performance.now() - started;
          stats.reports += 1;
          stats[confined ? 'confined' : 'full'] += 1;
          stats[confined ? 'confinedMs' : 'fullMs'] += ms;
        }
      };
      stopWatching = watchMutations(report);
      report(null);
      return true;
    },
    /** The current watch's reports: how many reused the cached queries (``confined``: the
     * page changed only inside the newest answer's text, i.e. a streamed chunk) and how many
     * looked at the whole page (``full``), with the time each kind took in all. */
    watchStats: { reports: 0, confined: 0, full: 0, confinedMs: 0, fullMs: 0 },
    unwatch() {
      if (stopWatching) stopWatching();
      stopWatching = null;
      return true;
    },

    /**
     * Resolve when the page is ready for a question or shows why it cannot be: composer
     * present, login wall, or a Cloudflare check. Event-driven (mutations), bounded by timeoutMs.
     */
    whenReady(p, timeoutMs) {
      const site = siteOf(p);
      const state = () => {
        if (site.challenge()) return 'challenge';
        if (site.loginWall()) return 'login';
        if (site.input() && document.readyState === 'complete') return 'ready';
        return '';
      };
      return waitUntil(state, timeoutMs);
    },

    /**
     * Whether earlier turns may still be arriving: a document loaded at a conversation URL
     * (the pack's urls.conversation_path) moments ago, asked for the first time. A fresh chat
     * (whose URL only changed by pushState), a page loaded long ago, or one already settled
     * has nothing left to load, so it pays no quiet window.
     */
    needsSettle(p) {
      if (settled) return false; // once per document: later turns were made live, not loaded
      settled = true;
      const conversation = siteOf(p).pack.conversationPath;
      const nav = performance.getEntriesByType('navigation')[0];
      const loadedAt = nav ? new URL(nav.name).pathname : location.pathname;
      return !!conversation && conversation.test(loadedAt) && performance.now() < 15000;
    },

    /** Resolve once no mutation happened for quietMs (page settled), or at timeoutMs. */
    quiet: (quietMs, timeoutMs) => settle(() => true, () => true, quietMs, timeoutMs),

    // ---- conversations (docs/sites.md#conversations) ----

    /** The turns the page renders now, in order: [{key, role, text}]. */
    conversationTurns: (p) => siteOf(p).conversationTurns(),

    /** Resolve with the number of rendered messages once there are at least ``least`` and
     * nothing changed for quietMs (the conversation loaded), or at timeoutMs. */
    whenTurns(p, least, quietMs, timeoutMs) {
      const site = siteOf(p);
      const count = () => site.messages().length;
      return settle(() => count() >= least, count, quietMs, timeoutMs);
    },

    /** Resolve with conversationLinks() once there are some and nothing changed for quietMs
     * (the sidebar loaded), or at timeoutMs with whatever there is. */
    whenConversationLinks(p, quietMs, timeoutMs) {
      const site = siteOf(p);
      return settle(() => site.conversationLinks().links.length > 0, () => site.conversationLinks(),
        quietMs, timeoutMs);
    },

    /**
     * One step through a virtualized history [G2.1]: scroll its scroller to the top (where
     * 'top') or the bottom, then resolve at the first mutation that changes the message at
     * that end (more rendered), else after quietMs without mutations, or at timeoutMs. Says
     * whether that end changed, whether the scroller rests at it, and the turns now rendered.
     * The page gets its scroll event at once (the browser's own comes with the next frame,
     * which a background tab gets about once a second), and the quiet window restarts at
     * each scroll event, so the page's reaction to either is waited for.
     */
    historyStep(p, where, quietMs, timeoutMs) {
      const site = siteOf(p);
      const scroller = site.historyScroller();
      const end = () => {
        const m = site.messages();
        return where === 'top' ? m[0] : last(m);
      };
      const atEnd = () => !scroller || (where === 'top'
        ? scroller.scrollTop <= 1
        : scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 1);
      const before = end();
      const result = () => ({
        scroller: !!scroller, changed: end() !== before, atEnd: atEnd(), turns: site.conversationTurns(),
      });
      if (!scroller) return Promise.resolve(result());
      return new Promise((resolve) => {
        let finished = false;
        let scrolled = false;
        let stop = () => {};
        let quiet = null;
        const deadline = setTimeout(finish, timeoutMs);
        const restart = () => {
          clearTimeout(quiet);
          quiet = setTimeout(finish, quietMs);
        };
        const onScroll = () => {
          scrolled = true;
          restart();
        };
        function finish() {
          if (finished) return;
          finished = true;
          clearTimeout(quiet);
          clearTimeout(deadline);
          scroller.removeEventListener('scroll', onScroll);
          stop();
          resolve(result());
        }
        stop = watchMutations(() => {
          if (end() !== before) return finish();
          if (scrolled) restart();
        });
        scroller.addEventListener('scroll', onScroll);
        const from = scroller.scrollTop;
        scroller.scrollTop = where === 'top' ? 0 : scroller.scrollHeight;
        if (scroller.scrollTop === from) onScroll(); // nowhere to go: no scroll event comes
        else scroller.dispatchEvent(new Event('scroll'));
      });
    },

    /** The HTTP status of this document's own response, 0 when the browser does not say
     * (docs/sites.md#where: a place the site does not have is told by behaviour). */
    navigationStatus() {
      const entry = /** @type {PerformanceNavigationTiming|undefined} */ (
        performance.getEntriesByType('navigation')[0]);
      return entry && entry.responseStatus ? entry.responseStatus : 0;
    },

    /** Resolve when the send button is enabled (docs/sites.md#send-fallbacks: wait, don't click blind). */
    whenSendEnabled(p, timeoutMs) {
      const site = siteOf(p);
      return waitUntil(() => {
        const b = site.sendButton();
        return b && !isDisabled(b) ? 'enabled' : '';
      }, timeoutMs);
    },

    /** Resolve 'gone' when no stop button shows (docs/sites.md#gemini-stuck); '' at timeoutMs. */
    whenStopGone(p, timeoutMs) {
      const site = siteOf(p);
      return waitUntil(() => (site.stopButton() ? '' : 'gone'), timeoutMs);
    },

    /** Resolve when the user turn count exceeds n (the question was sent). */
    whenUserCountAbove(p, n, timeoutMs) {
      const site = siteOf(p);
      return waitUntil(() => (site.users().length > n ? 'sent' : ''), timeoutMs);
    },

    /**
     * Resolve 'taken_back' when the question's user turn is gone again (no more than n user
     * turns) and the question is back in the editor: the site refused it (Gemini's
     * "rollback", SITE-FACTS G14.2; docs/sites.md#sent); '' at timeoutMs.
     */
    whenTakenBack(p, n, text, timeoutMs) {
      const site = siteOf(p);
      return waitUntil(
        () => (site.users().length <= n && api.inputHolds(p, text) ? 'taken_back' : ''),
        timeoutMs,
      );
    },

    focusInput(p) {
      const el = siteOf(p).input();
      if (!el) return false;
      el.focus();
      if (el.tagName === 'TEXTAREA') el.select();
      else {
        const range = document.createRange();
        range.selectNodeContents(el);
        const sel = /** @type {Selection} */ (getSelection()); // null only in a frame without a view
        sel.removeAllRanges();
        sel.addRange(range);
      }
      return true;
    },

    /** Phase 1 input (docs/sites.md#input-fallbacks): JavaScript only, as the pack says. */
    setInputByScript(p, text) {
      const site = siteOf(p);
      const el = site.input();
      if (!el) return false;
      el.focus();
      if (el.tagName === 'TEXTAREA') {
        // React reads .value on input events; set it through the native setter first.
        const value = /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value'));
        /** @type {(this: Element, v: string) => void} */ (value.set).call(el, text);
        el.dispatchEvent(new Event('input', { bubbles: true }));
      } else if (site.pack.flow.script_input === 'inner_text_events') {
        // Gemini's Quill editor takes its text set directly plus input events (G1.2).
        el.innerText = text;
        el.dispatchEvent(new Event('input', { bubbles: true }));
        el.dispatchEvent(new Event('change', { bubbles: true }));
      } else {
        // ProseMirror takes text through the editing commands, as typing would (C1.3).
        api.focusInput(p);
        document.execCommand('insertText', false, text);
      }
      return true;
    },

    clearInput(p) {
      if (!api.focusInput(p)) return false;
      document.execCommand('delete', false);
      return true;
    },

    inputHolds(p, text) {
      const have = norm(inputText(siteOf(p).input()));
      const want = norm(text).slice(0, 20);
      return want.length > 0 && have.includes(want);
    },

    /** Click send by script; returns the button's centre for the CDP mouse fallback. */
    sendTarget(p) {
      const b = siteOf(p).sendButton();
      if (!b) return null;
      b.scrollIntoView({ block: 'center' });
      const r = b.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2, disabled: isDisabled(b) };
    },
    clickSend(p) {
      const b = siteOf(p).sendButton();
      if (!b || isDisabled(b)) return false;
      b.click();
      return true;
    },
    /** A cancelled ask stops the answer so the tab is ready for the next question. */
    clickStop(p) {
      const b = siteOf(p).stopButton();
      if (!b) return false;
      b.click();
      return true;
    },
    /** Click a skip-thinking control ("Answer now", C4.4) of p, or of any site when p is absent. */
    clickSkipThinking(p) {
      for (const site of p ? [siteOf(p)] : Object.values(sites)) {
        const b = site.skipButton();
        if (b && !isDisabled(b)) {
          b.click();
          return true;
        }
      }
      return false;
    },

    // ---- the mode picker (docs/sites.md#modes) --------------------------------------------

    /**
     * The visible items of the site's mode menu (selectors.mode_item, outermost matches):
     * each one's ``id`` (data-mode-id, else its test id without a prefix of
     * texts.mode_id_prefixes), ``label`` (its selectors.mode_label, else its text),
     * ``selected`` (it or something in it matches selectors.mode_selected) and ``disabled``.
     */
    modeItems(p) {
      const S = siteOf(p).pack.sel;
      const T = siteOf(p).pack.texts;
      const found = all(S.mode_item).filter(visible);
      const items = found.filter((el) => !found.some((o) => o !== el && o.contains(el)));
      const clean = (s) => (s || '').replace(/\s+/g, ' ').trim();
      const idOf = (el) => {
        const direct = el.getAttribute('data-mode-id');
        if (direct) return direct;
        const testId = el.getAttribute('data-testid') || el.getAttribute('data-test-id') || '';
        const prefix = (T.mode_id_prefixes || []).find((x) => testId.startsWith(x));
        return prefix ? testId.slice(prefix.length) : '';
      };
      return items.map((el) => {
        const label = S.mode_label ? firstOf(S.mode_label, el) : null;
        return {
          id: idOf(el),
          label: clean((label || el).textContent),
          selected: matchesAny(el, S.mode_selected) ||
            (!!S.mode_selected && !!el.querySelector(joined(S.mode_selected))),
          disabled: isDisabled(el) || isDisabled(el.closest('[aria-disabled]')),
        };
      });
    },
    /** The centre of mode item ``index`` (in modeItems order) for a trusted click. */
    modeItemTarget(p, index) {
      const S = siteOf(p).pack.sel;
      const found = all(S.mode_item).filter(visible);
      const el = found.filter((e) => !found.some((o) => o !== e && o.contains(e)))[index];
      if (!el) return null;
      el.scrollIntoView({ block: 'nearest' });
      const r = el.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2, disabled: isDisabled(el) };
    },
    /** Resolve once the mode menu shows ('open', ``open`` true) or shows no item ('closed'),
     * re-checking on every mutation; '' at timeoutMs. */
    whenModeMenu(p, open, timeoutMs) {
      const S = siteOf(p).pack.sel;
      return waitUntil(() => {
        const shown = all(S.mode_item).some(visible);
        if (open) return shown ? 'open' : '';
        return shown ? '' : 'closed';
      }, timeoutMs);
    },
    /** After a click on an item: 'selected' once the item ``index`` shows selected while the
     * menu stays open, 'closed' once the menu closed (then it is opened again to look). */
    whenModeChosen(p, index, timeoutMs) {
      return waitUntil(() => {
        const items = api.modeItems(p);
        if (!items.length) return 'closed';
        return items[index] && items[index].selected ? 'selected' : '';
      }, timeoutMs);
    },

    // ---- thinking effort and Deep Think (docs/sites.md#effort) -----------------------------

    /**
     * ChatGPT's Intelligence picker as the page shows it now: ``menu`` (selectors.effort_menu
     * visible), ``opener`` (a selectors.effort_menu_item in it whose text starts with one of
     * texts.effort_opener_labels: the Effort submenu opener, "EffortHigh"), ``advanced`` (one
     * labelled with texts.effort_advanced_labels) and ``rows``: the visible
     * selectors.effort_item outside the picker's own menu (the Effort submenu's tier rows),
     * each with ``label``, ``selected`` (selectors.effort_selected on or in it), ``disabled``
     * and ``notice`` (the text of its aria-describedby elements or its title: C13.5).
     */
    effortState(p) {
      const S = siteOf(p).pack.sel;
      const T = siteOf(p).pack.texts;
      const clean = (s) => (s || '').replace(/\s+/g, ' ').trim();
      const menus = all(S.effort_menu).filter(visible);
      const inMenu = (el) => menus.some((m) => m.contains(el));
      const items = menus.flatMap((m) => all(S.effort_menu_item, m).filter(visible));
      const startsWith = (el, texts) =>
        (texts || []).some((t) => bare(el.textContent).startsWith(bare(t)));
      const opener = items.find((el) => el.getAttribute('aria-haspopup') === 'menu' &&
        startsWith(el, T.effort_opener_labels));
      const advanced = items.find((el) => labelIs(el, T.effort_advanced_labels || []));
      const found = all(S.effort_item).filter((el) => visible(el) && !inMenu(el));
      const rows = found.filter((el) => !found.some((o) => o !== el && o.contains(el)));
      const noticeOf = (el) => {
        const ids = (el.getAttribute('aria-describedby') || '').split(/\s+/).filter(Boolean);
        const texts = ids.map((id) => clean((document.getElementById(id) || {}).textContent));
        return clean([...texts, el.getAttribute('title') || ''].join(' '));
      };
      return {
        menu: menus.length > 0,
        opener: opener ? clean(opener.textContent) : '',
        advanced: !!advanced,
        rows: rows.map((el) => ({
          label: clean(el.textContent),
          selected: matchesAny(el, S.effort_selected) ||
            (!!S.effort_selected && !!el.querySelector(joined(S.effort_selected))),
          disabled: isDisabled(el),
          notice: isDisabled(el) ? noticeOf(el) : '',
        })),
      };
    },
    /** The centre of what ``what`` names in the Intelligence picker ('advanced', 'opener', or
     * a row's index in effortState order) for a trusted click; null when it does not show. */
    effortTarget(p, what) {
      const S = siteOf(p).pack.sel;
      const T = siteOf(p).pack.texts;
      const menus = all(S.effort_menu).filter(visible);
      const items = menus.flatMap((m) => all(S.effort_menu_item, m).filter(visible));
      let el = null;
      if (what === 'advanced') el = items.find((e) => labelIs(e, T.effort_advanced_labels || []));
      else if (what === 'opener') {
        el = items.find((e) => e.getAttribute('aria-haspopup') === 'menu' &&
          (T.effort_opener_labels || []).some((t) => bare(e.textContent).startsWith(bare(t))));
      } else {
        const found = all(S.effort_item).filter((e) => visible(e) && !menus.some((m) => m.contains(e)));
        el = found.filter((e) => !found.some((o) => o !== e && o.contains(e)))[what];
      }
      if (!el) return null;
      el.scrollIntoView({ block: 'nearest' });
      const r = el.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2, disabled: isDisabled(el) };
    },
    /** Resolve once the picker shows what ``what`` asks: 'menu', 'opener', 'rows', 'closed'
     * (no picker menu and no row), or 'chosen:<i>' (row i shown selected; 'closed' when the
     * menus closed instead); '' at timeoutMs. */
    whenEffort(p, what, timeoutMs) {
      return waitUntil(() => {
        const st = api.effortState(p);
        const closed = !st.menu && !st.rows.length;
        if (what === 'closed') return closed ? 'closed' : '';
        if (what === 'menu') return st.menu ? 'menu' : '';
        if (what === 'opener') return st.opener ? 'opener' : '';
        if (what === 'rows') return st.rows.length ? 'rows' : '';
        const i = Number(what.split(':')[1]);
        if (st.rows[i] && st.rows[i].selected) return 'selected';
        return closed ? 'closed' : '';
      }, timeoutMs);
    },
    /** The composer pill's text (selectors.effort_button): after the menus close it names the
     * tier the page holds (C13.4). */
    effortPill(p) {
      const el = last(all(siteOf(p).pack.sel.effort_button).filter(visible));
      return el ? (el.textContent || '').replace(/\s+/g, ' ').trim() : '';
    },

    /** Gemini's Tools menu items (selectors.deep_think_item, visible): each one's ``label``,
     * whether it is Deep Think (texts.deep_think_labels), ``disabled`` and its ``notice``. */
    deepThinkItems(p) {
      const S = siteOf(p).pack.sel;
      const T = siteOf(p).pack.texts;
      const clean = (s) => (s || '').replace(/\s+/g, ' ').trim();
      return all(S.deep_think_item).filter(visible).map((el) => ({
        label: clean(el.textContent),
        deep_think: labelIs(el, T.deep_think_labels || []),
        disabled: isDisabled(el),
        notice: isDisabled(el) ? clean(el.getAttribute('title') || '') : '',
      }));
    },
    /** The centre of the Tools menu's Deep Think item for a trusted click; null when none. */
    deepThinkTarget(p) {
      const S = siteOf(p).pack.sel;
      const T = siteOf(p).pack.texts;
      const el = all(S.deep_think_item).filter(visible)
        .find((e) => labelIs(e, T.deep_think_labels || []));
      if (!el) return null;
      el.scrollIntoView({ block: 'nearest' });
      const r = el.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2, disabled: isDisabled(el) };
    },

    // ---- Deep Research (docs/sites.md#research) ---------------------------------------------

    /** The visible items of the site's research menu (selectors.research_item): each one's
     * ``label``, whether it is Deep Research (texts.research_labels), ``disabled``, ``notice``. */
    researchItems(p) {
      const S = siteOf(p).pack.sel;
      const T = siteOf(p).pack.texts;
      const clean = (s) => (s || '').replace(/\s+/g, ' ').trim();
      const found = all(S.research_item).filter(visible);
      return found.filter((el) => !found.some((o) => o !== el && o.contains(el))).map((el) => ({
        label: clean(el.textContent),
        research: labelIs(el, T.research_labels || []),
        disabled: isDisabled(el),
        notice: isDisabled(el) ? clean(el.getAttribute('title') || '') : '',
      }));
    },
    /** The centre of the menu's Deep Research item for a trusted click; null when none. */
    researchTarget(p) {
      const S = siteOf(p).pack.sel;
      const T = siteOf(p).pack.texts;
      const el = all(S.research_item).filter(visible)
        .find((e) => labelIs(e, T.research_labels || []));
      if (!el) return null;
      el.scrollIntoView({ block: 'nearest' });
      const r = el.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2, disabled: isDisabled(el) };
    },
    /** Whether the composer shows Deep Research armed: a visible selectors.research_pill that
     * names the connector (data-id) or holds one of texts.research_pill_labels (C9.2, G11.1). */
    researchArmed(p) {
      const S = siteOf(p).pack.sel;
      const T = siteOf(p).pack.texts;
      return all(S.research_pill).filter(visible).some((el) =>
        /deep_research/.test(el.getAttribute('data-id') || '') ||
        (T.research_pill_labels || []).some((t) => canon(controlText(el)).includes(canon(t))));
    },
    whenResearchArmed(p, timeoutMs) {
      return waitUntil(() => (api.researchArmed(p) ? 'armed' : ''), timeoutMs);
    },
    /** The start control of the newest turn's plan (selectors.research_start, else a button
     * labelled with texts.research_start_labels), or null. */
    researchStartControl(p) {
      const site = siteOf(p);
      const S = site.pack.sel;
      const turn = site.turnOf(site.newestAnswer());
      const named = all(S.research_start).filter(visible);
      if (named.length) return last(named);
      if (!turn) return null;
      return last([...turn.querySelectorAll('button, [role="button"]')]
        .filter((b) => visible(b) && !isDisabled(b) && labelIs(b, site.pack.texts.research_start_labels || [])));
    },
    /**
     * One look at the research as the page shows it (research_core.PageLook): ``start`` (a
     * start control), ``plan`` (the newest turn holds texts.research_plan), ``running`` (a
     * whole text of texts.research_running in the newest turn, a selectors.research_running
     * or a selectors.research_frame shown), ``done`` (selectors.research_done shown),
     * ``generating`` (the stop button), ``reply`` (the newest answer's text).
     */
    researchPage(p) {
      const site = siteOf(p);
      const S = site.pack.sel;
      const T = site.pack.texts;
      const a = site.newestAnswer();
      const turn = site.turnOf(a);
      const text = turn ? canon(turn.textContent) : '';
      let running = all(S.research_running).some(visible) ||
        (!!turn && all(S.research_frame, turn).length > 0);
      if (!running && turn && T.research_running) {
        const wanted = new Set(T.research_running.map(bare));
        const walker = document.createTreeWalker(turn, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n && !running; n = walker.nextNode()) {
          running = wanted.has(bare(n.textContent));
        }
      }
      return {
        start: !!api.researchStartControl(p),
        plan: !!text && (T.research_plan || []).some((t) => text.includes(canon(t))),
        running,
        done: all(S.research_done).some(visible),
        generating: !!site.stopButton(),
        reply: a ? (a.textContent || '').trim().slice(0, 200) : '',
      };
    },
    /**
     * A report shown on the page (selectors.research_report, G11.6): its ``markdown`` (the
     * converter ``extract`` uses) and the cited ``sources`` (selectors.research_sources:
     * each link's text, else its title, and its URL), each URL once.
     */
    researchReport(p) {
      const site = siteOf(p);
      const S = site.pack.sel;
      const body = last(all(S.research_report));
      const clean = (s) => (s || '').replace(/\s+/g, ' ').trim();
      const seen = new Set();
      const sources = [];
      for (const a of all(S.research_sources)) {
        const url = a.href || '';
        if (!url || seen.has(url)) continue;
        seen.add(url);
        sources.push({ title: clean(a.textContent) || a.getAttribute('title') || url, url });
      }
      return { markdown: body ? containerText(site, body).trim() : '', sources };
    },
    /**
     * A research's messages as its reopened conversation shows them (selectors.research_reopened,
     * G11.6: plan, completion notice, report), after the newest user turn (the question, or
     * the person's answers to the clarifying questions) and outside the immersive panel
     * (selectors.research_report): each one's ``markdown``, in page order.
     */
    researchReopened(p) {
      const site = siteOf(p);
      const S = site.pack.sel;
      const question = last(all(S.user_message));
      if (!question) return { texts: [] };
      const after = (el) => !!(question.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING);
      const texts = all(S.research_reopened)
        .filter((el) => after(el) && !matchesAny(el, S.research_report))
        .map((el) => containerText(site, el).trim());
      return { texts };
    },
    /** The centre of the plan's start control for a trusted click; null when none. */
    researchStartTarget(p) {
      const el = api.researchStartControl(p);
      if (!el) return null;
      el.scrollIntoView({ block: 'center' });
      const r = el.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2, disabled: isDisabled(el) };
    },
    /**
     * ChatGPT's conversation JSON read with the page's own credentials (C9.9, C7.8): the
     * session's accessToken (C5.3) as the Bearer of GET /backend-api/conversation/<id>
     * ?include_widget_state=true. Returns {status, body} (body null unless JSON).
     */
    async researchConversation(p, id) {
      let token = '';
      try {
        const session = await fetch('/api/auth/session', { credentials: 'include' });
        if (session.ok) token = (await session.json()).accessToken || '';
      } catch (e) {
        token = '';
      }
      /** @type {Record<string, string>} */
      const headers = token ? { authorization: `Bearer ${token}` } : {};
      try {
        const r = await fetch(`/backend-api/conversation/${encodeURIComponent(id)}?include_widget_state=true`,
          { credentials: 'include', headers });
        let body = null;
        try {
          body = await r.json();
        } catch (e) {
          body = null;
        }
        return { status: r.status, body };
      } catch (e) {
        return { status: 0, body: null };
      }
    },
    /** Resolve 'changed' at the page's next DOM change, '' at timeoutMs: the research wait's
     * event (a re-read follows each change; without one the wait re-reads anyway). */
    whenPageChanges(p, timeoutMs) {
      return new Promise((resolve) => {
        let stop = null;
        const deadline = setTimeout(() => {
          if (stop) stop();
          resolve('');
        }, timeoutMs);
        stop = watchMutations(() => {
          clearTimeout(deadline);
          stop();
          resolve('changed');
        });
      });
    },

    // ---- files with the question (docs/sites.md#attachments) -----------------------------

    /** The centre of the newest visible element of the pack's selector list ``name``,
     * scrolled into view, for a trusted CDP click (C1.13); null when none shows. */
    controlTarget(p, name) {
      const el = last(all(siteOf(p).pack.sel[name]).filter(visible));
      if (!el) return null;
      el.scrollIntoView({ block: 'center' });
      const r = el.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2, disabled: isDisabled(el) };
    },
    /** Resolve 'visible' once an element of the pack's list ``name`` shows; '' at timeoutMs. */
    whenVisible(p, name, timeoutMs) {
      const list = siteOf(p).pack.sel[name];
      return waitUntil(() => (all(list).some(visible) ? 'visible' : ''), timeoutMs);
    },
    /** The first of the pack's selector ``names`` shown on the page, once one is ('' at the
     * deadline): one wait for "this, or the control that reveals it". */
    whichVisible(p, names, timeoutMs) {
      const sel = siteOf(p).pack.sel;
      const shown = () => names.find((n) => !!sel[n] && all(sel[n]).some(visible)) || '';
      return waitUntil(shown, timeoutMs);
    },
    /**
     * The files staged in the composer: chips (outermost matches of attachment_chip outside
     * the conversation), how many of ``names`` they show (text, title or aria-label), and
     * whether one is still busy (upload_busy on or in a chip).
     */
    attachments(p, names) {
      const site = siteOf(p);
      const S = site.pack.sel;
      const found = all(S.attachment_chip).filter((el) => !site.inMessage(el));
      const chips = found.filter((el) => !found.some((o) => o !== el && o.contains(el)));
      const fold = (s) => (s || '').replace(/\s+/g, ' ').trim().toLowerCase();
      const said = (el) => fold([el, ...el.querySelectorAll('[title], [aria-label]')]
        .map((n) => `${n.getAttribute('title') || ''} ${n.getAttribute('aria-label') || ''}`)
        .join(' ') + ' ' + el.textContent);
      const texts = chips.map(said);
      const shown = names.filter((n) => texts.some((t) => t.includes(fold(n)))).length;
      const busy = !!S.upload_busy &&
        chips.some((c) => matchesAny(c, S.upload_busy) || !!c.querySelector(joined(S.upload_busy)));
      return { chips: chips.length, shown, busy };
    },
    /** Resolve 'attached' once every file of ``names`` has its chip (by name, or by the chip
     * count rising by as many when the site shortens names) and no chip is busy. */
    whenAttached(p, names, baseline, timeoutMs) {
      return waitUntil(() => {
        if (api.uploadConsent(p)) return 'consent';
        const s = api.attachments(p, names);
        const each = s.shown === names.length || s.chips >= baseline + names.length;
        return each && !s.busy ? 'attached' : '';
      }, timeoutMs);
    },
    /**
     * The site's upload consent dialog, when one shows (G5.3: Gemini's first upload asks
     * "Creating content from images and files", Cancel/Agree): a visible blocking_dialog
     * holding one of texts.upload_consent. Returns that text, else ''. Only looked at:
     * consent is the person's to give, so nothing here ever presses a button of it.
     */
    uploadConsent(p) {
      const site = siteOf(p);
      const known = site.pack.texts.upload_consent;
      if (!known || !site.pack.sel.blocking_dialog) return '';
      for (const dialog of all(site.pack.sel.blocking_dialog).filter(visible)) {
        const text = canon(dialog.textContent);
        const hit = known.find((t) => text.includes(canon(t)));
        if (hit) return hit;
      }
      return '';
    },
    /** Resolve with uploadConsent() once it shows, re-checking on every mutation; '' at
     * timeoutMs. */
    whenUploadConsent(p, timeoutMs) {
      return waitUntil(() => api.uploadConsent(p), timeoutMs);
    },

    /**
     * The site's own file input for an attachment (selectors.file_input): the newest element
     * of the first selector that matches (called for the element itself: call_object).
     * @param {string[]} selectors
     */
    fileInput: (selectors) => firstOf(selectors),
    /** @param {HTMLInputElement} el Does this file input take several files? */
    takesMany: (el) => !!el.multiple,

    /**
     * A resumed answer's page (bridge/providers/resume.py): how many user and assistant turns
     * the pack's selectors find (the same lists `users`/`answers` count with), the newest user
     * turn's text, and whether an answer follows it.
     * @param {string[]} userSelectors
     * @param {string[]} answerSelectors
     */
    turnState(userSelectors, answerSelectors) {
      /** @param {string[]} list */
      const every = (list) => (list.length ? [...document.querySelectorAll(list.join(', '))] : []);
      const users = every(userSelectors);
      const answers = every(answerSelectors);
      const u = last(users);
      const a = last(answers);
      return {
        users: users.length,
        answers: answers.length,
        user_text: u ? /** @type {HTMLElement} */ (u).innerText || u.textContent || '' : null,
        answer_after_user: !!(u && a && u.compareDocumentPosition(a) & Node.DOCUMENT_POSITION_FOLLOWING),
      };
    },

    /**
     * The answer as the site copies it (bridge/providers/copy_action.py): click the newest
     * turn's copy button and capture what it writes, without the clipboard being touched:
     * navigator.clipboard's writeText/write are replaced for the moment of the click and put
     * back after; a copy event's data is read too. {text} or {why}.
     * @param {string} turnSel
     * @param {string} buttonSel
     * @param {string} assistantSel
     * @param {number} ms
     * @returns {Promise<{ text: string } | { why: string }>}
     */
    async copyAnswer(turnSel, buttonSel, assistantSel, ms) {
      const message = last([...document.querySelectorAll(assistantSel)]);
      if (!message) return { why: 'no assistant message' };
      const turn = message.closest(turnSel) || message;
      const button = /** @type {HTMLElement | null} */ (last([...turn.querySelectorAll(buttonSel)]));
      if (!button) return { why: 'no copy button in the newest turn' };
      const clip = /** @type {Record<string, any> | undefined} */ (navigator.clipboard);
      const own = clip
        ? { writeText: Object.getOwnPropertyDescriptor(clip, 'writeText'), write: Object.getOwnPropertyDescriptor(clip, 'write') }
        : null;
      /** @type {(found: { text: string } | { why: string }) => void} */
      let settle = () => {};
      /** @type {Promise<{ text: string } | { why: string }>} */
      const got = new Promise((resolve) => {
        settle = resolve;
      });
      /** @param {unknown} text */
      const take = (text) => settle({ text: String(text) });
      if (clip) {
        clip.writeText = async (/** @type {string} */ text) => take(text);
        clip.write = async (/** @type {ClipboardItem[]} */ items) => {
          for (const item of items) {
            if (item.types.includes('text/plain')) {
              take(await (await item.getType('text/plain')).text());
              return;
            }
          }
          settle({ why: 'the copy held no text/plain' });
        };
      }
      /** @param {ClipboardEvent} event */
      const onCopy = (event) => {
        const text = event.clipboardData && event.clipboardData.getData('text/plain');
        if (text) take(text);
      };
      window.addEventListener('copy', onCopy);
      const deadline = setTimeout(() => settle({ why: 'the copy button wrote nothing' }), ms);
      try {
        button.click();
        return await got;
      } finally {
        clearTimeout(deadline);
        window.removeEventListener('copy', onCopy);
        if (clip && own) {
          for (const name of /** @type {const} */ (['writeText', 'write'])) {
            const descriptor = own[name];
            if (descriptor) Object.defineProperty(clip, name, descriptor);
            else delete clip[name];
          }
        }
      }
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
        pack: { fingerprint: siteOf(p).pack.fingerprint, errors: packErrors },
        notices: api.notices(p),
        observation: observe(p),
      };
    },
  };

  /**
   * fn() with its whole-document queries answered by the document's index (``makeIndex``),
   * made here if no watch made it yet: the waits below re-check on every mutation, and on a
   * long conversation a fresh query each time cost each ask in proportion to its length.
   * Each call gets a cache of its own (no answer carries over from one check to the next).
   */
  function indexed(fn) {
    if (!docIndex) docIndex = makeIndex();
    const outer = [queryCache, queryIndex];
    queryCache = new Map();
    queryIndex = docIndex;
    try {
      return fn();
    } finally {
      [queryCache, queryIndex] = outer;
    }
  }

  /** Resolve with value() once ready() holds and no mutation came for quietMs (a quiet
   * window, restarted by each mutation), or at timeoutMs whatever holds. */
  function settle(readyOf, valueOf, quietMs, timeoutMs) {
    const ready = () => indexed(readyOf);
    const value = () => indexed(valueOf);
    return new Promise((resolve) => {
      let quiet = null;
      let stop = () => {};
      const finish = () => {
        clearTimeout(quiet);
        clearTimeout(deadline);
        stop();
        resolve(value());
      };
      const check = () => {
        clearTimeout(quiet);
        quiet = ready() ? setTimeout(finish, quietMs) : null;
      };
      const deadline = setTimeout(finish, timeoutMs);
      stop = watchMutations(check);
      check();
    });
  }

  /** Resolve with state() once it is truthy, re-checking on every mutation; '' at timeout. */
  function waitUntil(stateOf, timeoutMs) {
    const state = () => indexed(stateOf);
    return new Promise((resolve) => {
      const now = state();
      if (now) return resolve(now);
      let stop = null;
      const check = () => {
        const s = state();
        if (s) {
          clearTimeout(deadline);
          stop();
          document.removeEventListener('readystatechange', check);
          resolve(s);
        }
      };
      const deadline = setTimeout(() => {
        if (stop) stop();
        document.removeEventListener('readystatechange', check);
        resolve('');
      }, timeoutMs);
      stop = watchMutations(check);
      // readyState changes are not DOM mutations.
      document.addEventListener('readystatechange', check);
    });
  }

  Object.defineProperty(window, '__bridgePage', { value: api, configurable: true, enumerable: false });
  return VERSION;
})();
