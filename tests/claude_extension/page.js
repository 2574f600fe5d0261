// The fake Claude extension's page script (tests/claude_extension/fake.py evaluates it as
// `(this file)(op, args)`). It mirrors what the analysis of the real extension 1.0.31 shows
// of its accessibility-tree script: refs "ref_N" kept in window.__claudeElementMap as
// WeakRefs, counted by window.__claudeRefCounter; role from the role attribute or a tag map;
// label from aria-label, placeholder, title/alt, label[for], text content; output lines
// `- role "name" [ref=ref_N] (x=..,y=..) attr="..."`. See docs/claude-extension.md.
(function (op, args) {
  'use strict';
  const w = window;
  if (!w.__claudeElementMap) w.__claudeElementMap = {};
  if (typeof w.__claudeRefCounter !== 'number') w.__claudeRefCounter = 0;
  // The fake's own: element -> its ref, so a second read gives an element the same ref.
  if (!w.__claudeFakeRefOf) w.__claudeFakeRefOf = new WeakMap();
  const elementMap = w.__claudeElementMap;

  const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link']);
  const INTERACTIVE_TAGS = new Set(['a', 'button', 'input', 'select', 'textarea', 'summary']);
  const INTERACTIVE_ROLES = new Set([
    'button', 'link', 'textbox', 'checkbox', 'radio', 'combobox', 'listbox', 'menuitem',
    'option', 'searchbox', 'slider', 'spinbutton', 'switch', 'tab',
  ]);
  const STRUCTURAL_TAGS = new Set([
    'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'nav', 'main', 'header', 'footer', 'section',
    'article', 'aside', 'form', 'ul', 'ol', 'li', 'table', 'tr', 'td', 'th', 'label', 'img',
    'p', 'dialog',
  ]);

  function refOf(el) {
    const known = w.__claudeFakeRefOf.get(el);
    if (known && elementMap[known] && elementMap[known].deref() === el) return known;
    const ref = 'ref_' + (++w.__claudeRefCounter);
    elementMap[ref] = new WeakRef(el);
    w.__claudeFakeRefOf.set(el, ref);
    return ref;
  }

  function byRef(ref) {
    const weak = elementMap[ref];
    const el = weak && weak.deref();
    return el && el.isConnected ? el : null;
  }

  function inputRole(el) {
    const type = (el.getAttribute('type') || 'text').toLowerCase();
    if (type === 'checkbox') return 'checkbox';
    if (type === 'radio') return 'radio';
    if (type === 'range') return 'slider';
    if (type === 'number') return 'spinbutton';
    if (type === 'search') return 'searchbox';
    if (['button', 'submit', 'reset', 'image'].includes(type)) return 'button';
    return 'textbox';
  }

  function roleOf(el) {
    const explicit = el.getAttribute('role');
    if (explicit) return explicit.trim().split(/\s+/)[0];
    const tag = el.tagName.toLowerCase();
    if (tag === 'a') return 'link';
    if (tag === 'button') return 'button';
    if (tag === 'input') return inputRole(el);
    if (tag === 'select') return 'combobox';
    if (tag === 'textarea') return 'textbox';
    if (/^h[1-6]$/.test(tag)) return 'heading';
    return 'generic';
  }

  function clean(text) {
    const t = (text || '').replace(/\s+/g, ' ').trim();
    return t.length > 100 ? t.slice(0, 100) + '...' : t;
  }

  function labelOf(el) {
    const aria = el.getAttribute('aria-label');
    if (aria && aria.trim()) return clean(aria);
    const placeholder = el.getAttribute('placeholder');
    if (placeholder && placeholder.trim()) return clean(placeholder);
    const title = el.getAttribute('title') || el.getAttribute('alt');
    if (title && title.trim()) return clean(title);
    if (el.id) {
      const label = document.querySelector('label[for="' + CSS.escape(el.id) + '"]');
      if (label && label.textContent.trim()) return clean(label.textContent);
    }
    const tag = el.tagName.toLowerCase();
    if (tag === 'input' || tag === 'select' || tag === 'textarea') return '';
    return clean(el.textContent);
  }

  function isInteractive(el) {
    const tag = el.tagName.toLowerCase();
    if (INTERACTIVE_TAGS.has(tag)) return !(tag === 'input' && el.type === 'hidden');
    if (INTERACTIVE_ROLES.has(el.getAttribute('role') || '')) return true;
    if (el.hasAttribute('onclick') || el.isContentEditable) return true;
    const tabindex = el.getAttribute('tabindex');
    return tabindex !== null && Number(tabindex) >= 0;
  }

  function hasOwnText(el) {
    for (const node of el.childNodes) {
      if (node.nodeType === Node.TEXT_NODE && node.textContent.trim()) return true;
    }
    return false;
  }

  function included(el, filter) {
    if (filter === 'interactive') return isInteractive(el);
    return isInteractive(el) || STRUCTURAL_TAGS.has(el.tagName.toLowerCase()) ||
      el.hasAttribute('role') || hasOwnText(el);
  }

  function center(el) {
    const r = el.getBoundingClientRect();
    return { x: Math.round(r.left + r.width / 2), y: Math.round(r.top + r.height / 2) };
  }

  function line(el, depth) {
    const role = roleOf(el);
    const name = labelOf(el);
    const p = center(el);
    let out = '  '.repeat(depth) + '- ' + role;
    if (name) out += ' "' + name.replace(/"/g, '\\"') + '"';
    out += ' [ref=' + refOf(el) + '] (x=' + p.x + ',y=' + p.y + ')';
    for (const attr of ['id', 'type', 'href', 'placeholder']) {
      const value = el.getAttribute(attr);
      if (value) out += ' ' + attr + '="' + clean(value).replace(/"/g, '\\"') + '"';
    }
    return out;
  }

  function walk(el, depth, maxDepth, filter, out) {
    if (depth >= maxDepth || SKIPPED.has(el.tagName.toLowerCase())) return;
    let next = depth;
    if (included(el, filter)) {
      out.push(line(el, depth));
      next = depth + 1;
    }
    for (const child of el.children) walk(child, next, maxDepth, filter, out);
  }

  function readPage(a) {
    const maxDepth = typeof a.depth === 'number' ? a.depth : 15;
    const filter = a.filter === 'interactive' ? 'interactive' : 'all';
    let root = document.body || document.documentElement;
    if (a.ref_id) {
      root = byRef(a.ref_id);
      if (!root) return { error: 'Element with ref_id "' + a.ref_id + '" not found' };
    }
    const out = [];
    if (a.ref_id && !included(root, filter)) out.push(line(root, 0));
    walk(root, a.ref_id && out.length ? 1 : 0, maxDepth, filter, out);
    return { text: out.join('\n') };
  }

  function find(a) {
    const words = String(a.query || '').toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) return { error: 'Query must not be empty' };
    const scored = [];
    for (const el of document.querySelectorAll('body *')) {
      if (SKIPPED.has(el.tagName.toLowerCase()) || !included(el, 'all')) continue;
      const hay = [roleOf(el), labelOf(el), el.id, el.getAttribute('name') || '',
        el.getAttribute('type') || ''].join(' ').toLowerCase();
      const score = words.filter((word) => hay.includes(word)).length;
      if (score) scored.push({ el, score, interactive: isInteractive(el) });
    }
    scored.sort((a, b) => b.score - a.score || b.interactive - a.interactive);
    return {
      total: scored.length,
      lines: scored.slice(0, 20).map((s) => line(s.el, 0)),
    };
  }

  function formInput(a) {
    const el = byRef(a.ref);
    if (!el) return { error: 'Element with ref "' + a.ref + '" not found' };
    const value = a.value;
    const tag = el.tagName.toLowerCase();
    if (tag === 'select') {
      const text = String(value);
      const option = Array.from(el.options).find((o) => o.value === text) ||
        Array.from(el.options).find((o) => o.textContent.trim() === text.trim());
      if (!option) {
        const choices = Array.from(el.options).map((o) => '"' + o.value + '"').join(', ');
        return { error: 'Option "' + text + '" not found. Available options: ' + choices };
      }
      el.value = option.value;
    } else if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
      el.checked = value === true || value === 'true';
    } else if (tag === 'input' || tag === 'textarea') {
      const proto = tag === 'input' ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype;
      Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, String(value));
    } else if (el.isContentEditable) {
      el.textContent = String(value);
    } else {
      return { error: 'Element ' + a.ref + ' (' + tag + ') is not a form field' };
    }
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return { text: 'Set ' + a.ref + ' (' + roleOf(el) + ') to ' + JSON.stringify(value) };
  }

  function refPoint(a) {
    const el = byRef(a.ref);
    if (!el) return { error: 'Element with ref "' + a.ref + '" not found' };
    const r = el.getBoundingClientRect();
    const inView = r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
    if (a.scroll || !inView) el.scrollIntoView({ block: 'center', inline: 'center' });
    return center(el);
  }

  function pageText() {
    const source = document.querySelector('article') || document.querySelector('main') ||
      document.querySelector('[role="main"]') || document.body;
    return {
      title: document.title,
      url: location.href,
      source: source ? source.tagName.toLowerCase() : '',
      text: source ? source.innerText.trim() : '',
    };
  }

  const ops = {
    readPage, find, formInput, refPoint, pageText,
    element: (a) => byRef(a.ref),
  };
  if (!ops[op]) return { error: 'unknown page operation ' + op };
  return ops[op](args || {});
})
