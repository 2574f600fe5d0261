// @ts-check
// The "dom" tool group's page side (bridge/tools/dom.py): read-only DOM exploration. Injected
// once per document as window.__bridgeDom: page-wide functions are called by PageScript, element
// functions through Element.call with the element as their first argument (so they run in the
// element's own frame). Open shadow roots are pierced everywhere, for selectors and for text.
// Every result is plain JSON with snake_case keys and bounded in size: the limits are below and
// documented in dom.py; cut text ends with a marker saying how much was cut.
(() => {
  const VERSION = '__BRIDGE_PAGE_VERSION__';
  if (window.__bridgeDom && window.__bridgeDom.version === VERSION) return VERSION;

  const SNIPPET = 100; // element text in listings, accessible names
  const ATTRIBUTE_VALUE = 100; // attribute values in query_dom listings
  const LISTED_ATTRIBUTES = 10; // attributes per element in query_dom
  const FULL_VALUE = 1000; // attribute values in get_attributes, field values, metadata
  const MAX_ATTRIBUTES = 100; // attributes in get_attributes
  const MAX_STYLES = 100; // properties in get_computed_styles
  const STYLE_VALUE = 300;
  const MAX_META = 30; // og:* and twitter:* entries each
  const MAX_ARIA_NODES = 300;
  const MAX_FORMS = 20;
  const MAX_FIELDS = 100; // per form, and outside forms
  const MAX_OPTIONS = 50; // selected options per select

  const DEFAULT_STYLES = [
    'display', 'visibility', 'opacity', 'position', 'z-index', 'width', 'height', 'color',
    'background-color', 'font-size', 'font-weight', 'overflow', 'pointer-events', 'cursor',
  ];
  // Never text: their content is code, styling or inert markup.
  const NOT_TEXT = new Set(['script', 'style', 'template', 'noscript', 'head', 'title', 'meta', 'link']);
  // Usually inline: no word break around them when their text is joined with their neighbours'.
  const INLINE = new Set([
    'a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'dfn', 'em', 'font', 'i', 'kbd',
    'label', 'mark', 'q', 's', 'samp', 'slot', 'small', 'span', 'strong', 'sub', 'sup', 'time',
    'u', 'var',
  ]);
  const PASSWORD_MASK = '••••';

  // ---- text -----------------------------------------------------------------------------------

  const collapse = (s) => String(s == null ? '' : s).replace(/\s+/g, ' ').trim();

  /** s cut to max characters, with a marker saying how many were cut. */
  function clip(s, max) {
    const text = String(s == null ? '' : s);
    return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more chars]`;
  }

  // ---- the flat tree (open shadow roots pierced) ----------------------------------------------

  function requireElement(selector) {
    const el = deepQuery(selector);
    if (!el) throw new Error(`no element matches ${selector}`);
    return el;
  }

  /** Flat-tree text: alt of images, no scripts; spaces between block-ish elements. */
  function textOf(node, { skip = null, accessible = false, limit = Infinity } = {}) {
    let out = '';
    const visit = (n) => {
      if (out.length > limit) return;
      if (n.nodeType === Node.TEXT_NODE) {
        out += n.data;
        return;
      }
      if (n.nodeType === Node.ELEMENT_NODE) {
        if (n === skip || NOT_TEXT.has(n.localName)) return;
        if (accessible && (n.hidden || n.getAttribute('aria-hidden') === 'true')) return;
        if (n.localName === 'img') {
          out += ` ${n.getAttribute('alt') || ''} `;
          return;
        }
        const gap = INLINE.has(n.localName) ? '' : ' ';
        out += gap;
        for (const child of flatChildNodes(n)) visit(child);
        out += gap;
        return;
      }
      if (n.nodeType === Node.DOCUMENT_FRAGMENT_NODE) for (const child of n.childNodes) visit(child);
    };
    visit(node);
    return collapse(out);
  }

  /** innerText of root with open shadow trees in place (native innerText skips them). */
  function renderedText(root) {
    if (root.getClientRects().length === 0 && styleOf(root).display !== 'contents') return '';
    const hosts = deepElements(root).filter((el) => el.shadowRoot);
    if (root.shadowRoot) hosts.push(root);
    if (!hosts.length) return root.innerText || '';
    // Elements with a shadow host at or below them are walked; the rest keep native innerText.
    const walked = new Set();
    for (const host of hosts) {
      for (let n = /** @type {Element | null} */ (host); n && !walked.has(n); n = flatParentElement(n)) {
        walked.add(n);
        if (n === root) break;
      }
    }
    // As innerText does: a block asks for line breaks around it (a <p> two), and a run of
    // such requests becomes as many newlines as the largest; none at the start or the end.
    const parts = [];
    const visit = (node, parentStyle) => {
      if (node.nodeType === Node.TEXT_NODE) {
        const pre = /^(pre|pre-wrap|pre-line|break-spaces)$/.test(parentStyle.whiteSpace);
        if (parentStyle.visibility === 'visible') parts.push(pre ? node.data : node.data.replace(/\s+/g, ' '));
        return;
      }
      if (node.nodeType !== Node.ELEMENT_NODE || NOT_TEXT.has(node.localName)) return;
      const style = styleOf(node);
      if (style.display === 'none') return;
      if (node.localName === 'br') {
        parts.push('\n');
        return;
      }
      const breaks = node.localName === 'p' ? 2 : !style.display.startsWith('inline') && style.display !== 'contents' ? 1 : 0;
      if (breaks) parts.push(breaks);
      if (walked.has(node) || style.display === 'contents') {
        for (const child of flatChildNodes(node)) visit(child, style);
      } else {
        parts.push(node.innerText || '');
      }
      if (breaks) parts.push(breaks);
    };
    visit(root, styleOf(root));
    let out = '';
    let pending = 0;
    for (const part of parts) {
      if (typeof part === 'number') {
        pending = Math.max(pending, part);
      } else if (part && !((pending || !out) && /^[ \t]*$/.test(part))) {
        if (pending && out) out = out.replace(/[ \t]+$/, '') + '\n'.repeat(pending);
        out += pending || !out ? part.replace(/^[ \t]+/, '') : part;
        pending = 0;
      }
    }
    return out.replace(/[ \t]+$/, '');
  }

  // ---- naming elements --------------------------------------------------------------------------

  /**
   * A CSS selector for el, unique across the document and its open shadow roots when one
   * exists within el's own tree: #id if unique, else a child path (tag, :nth-of-type) up to
   * the nearest ancestor with a unique id or as far as needed. Selectors cannot cross a shadow
   * boundary, so an element in a shadow root gets a path inside its own tree (query_selector
   * pierces shadow roots, so that path finds it).
   */
  function cssPath(el, ctx) {
    const roots = ctx.roots || (ctx.roots = scopes(el.ownerDocument));
    const unique = (selector) => {
      let n = 0;
      for (const scope of roots) {
        n += scope.querySelectorAll(selector).length;
        if (n > 1) return false;
      }
      return n === 1;
    };
    const idSelector = (node) => (node.id ? `#${CSS.escape(node.id)}` : '');
    if (el.id && unique(idSelector(el))) return idSelector(el);
    let path = '';
    for (let node = el; node && node.nodeType === Node.ELEMENT_NODE; node = node.parentElement) {
      let segment;
      if (node !== el && node.id && unique(idSelector(node))) {
        segment = idSelector(node);
      } else {
        segment = CSS.escape(node.localName) + idSelector(node);
        const siblings = node.parentNode ? [...node.parentNode.children] : [node];
        const sameTag = siblings.filter((s) => s.localName === node.localName);
        if (sameTag.length > 1) segment += `:nth-of-type(${sameTag.indexOf(node) + 1})`;
      }
      path = path ? `${segment} > ${path}` : segment;
      if (unique(path)) return path;
    }
    return path;
  }

  const context = () => ({ roots: null });

  // ---- visibility -------------------------------------------------------------------------------

  const round = (v) => Math.round(v * 100) / 100;

  /** Why el is not rendered (a string), or null when it is rendered with a non-empty box. */
  function renderProblem(el) {
    if (!el.isConnected) return 'not attached to the document';
    const fast = el.checkVisibility && el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
    if (!fast) {
      for (let n = el; n; n = flatParentElement(n)) {
        if (styleOf(n).display === 'none') return `display:none on ${describe(n)}`;
      }
      const style = styleOf(el);
      if (style.visibility !== 'visible') {
        let setter = el;
        for (let p = flatParentElement(el); p && styleOf(p).visibility === style.visibility; p = flatParentElement(p)) {
          setter = p;
        }
        return `visibility:${style.visibility} on ${describe(setter)}`;
      }
      for (let n = el; n; n = flatParentElement(n)) {
        if (styleOf(n).opacity === '0') return `opacity:0 on ${describe(n)}`;
      }
      if (style.display === 'contents') {
        const shown = [...flatChildNodes(el)].some((c) =>
          c.nodeType === Node.TEXT_NODE ? /** @type {Text} */ (c).data.trim() !== '' : c.nodeType === Node.ELEMENT_NODE && renderProblem(c) === null,
        );
        return shown ? null : 'display:contents with nothing rendered';
      }
      if (el.getClientRects().length === 0) return 'not rendered (no layout box)';
    }
    const rect = el.getBoundingClientRect();
    if (rect.width === 0 || rect.height === 0) return `zero size (${round(rect.width)}x${round(rect.height)})`;
    return null;
  }

  const isRendered = (el) => renderProblem(el) === null;

  /** The part of rect inside the viewport of win (the element's own frame), or null. */
  function viewportIntersection(rect, win) {
    const left = Math.max(rect.left, 0);
    const top = Math.max(rect.top, 0);
    const right = Math.min(rect.right, win.innerWidth);
    const bottom = Math.min(rect.bottom, win.innerHeight);
    return right > left && bottom > top ? { left, top, right, bottom } : null;
  }

  const inViewport = (el) => el.isConnected && viewportIntersection(el.getBoundingClientRect(), windowOf(el)) !== null;

  /** The nearest ancestor that clips el (overflow other than visible) with el scrolled out of it. */
  function clippingAncestor(el, rect) {
    const doc = el.ownerDocument;
    for (let n = flatParentElement(el); n && n !== doc.body && n !== doc.documentElement; n = flatParentElement(n)) {
      const style = styleOf(n);
      if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
      const box = n.getBoundingClientRect();
      const overlaps = rect.right > box.left && rect.left < box.right && rect.bottom > box.top && rect.top < box.bottom;
      if (!overlaps) return n;
    }
    return null;
  }

  function checkVisibility(el) {
    const ctx = context();
    const rect = el.getBoundingClientRect();
    const box = { x: round(rect.x), y: round(rect.y), width: round(rect.width), height: round(rect.height) };
    const problem = renderProblem(el);
    const seen = problem === null ? viewportIntersection(rect, windowOf(el)) : null;
    let reason = problem;
    if (reason === null) {
      const clipper = clippingAncestor(el, rect);
      if (clipper) reason = `scrolled out of view inside ${describe(clipper)} (scroll needed)`;
    }
    if (reason === null && seen === null) reason = 'outside the viewport (scroll needed)';
    if (reason === null && seen !== null) {
      const x = (seen.left + seen.right) / 2;
      const y = (seen.top + seen.bottom) / 2;
      const hit = deepElementFromPoint(el.ownerDocument, x, y);
      // A hit on an ancestor is a gap inside el (a wrapped inline, pointer-events:none), not a cover.
      if (hit && !flatContains(el, hit) && !flatContains(hit, el)) {
        reason = `covered by ${cssPath(hit, ctx)} at its centre`;
      }
    }
    return { visible: reason === null, reason, rendered: problem === null, in_viewport: seen !== null, box };
  }

  // ---- roles and accessible names ---------------------------------------------------------------

  const NAME_FROM_CONTENT = new Set([
    'button', 'link', 'heading', 'cell', 'gridcell', 'columnheader', 'rowheader', 'row', 'checkbox',
    'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'treeitem',
    'tooltip', 'listitem',
  ]);
  const TEXT_INPUTS = new Set([
    'text', 'email', 'tel', 'url', 'password', 'date', 'datetime-local', 'month', 'week', 'time',
  ]);

  function inputRole(el) {
    const type = (el.type || 'text').toLowerCase();
    if (['button', 'submit', 'reset', 'image', 'file'].includes(type)) return 'button';
    if (type === 'checkbox' || type === 'radio') return type;
    if (type === 'range') return 'slider';
    if (type === 'number') return 'spinbutton';
    if (type === 'search') return el.hasAttribute('list') ? 'combobox' : 'searchbox';
    if (TEXT_INPUTS.has(type)) return el.hasAttribute('list') ? 'combobox' : 'textbox';
    return null;
  }

  const isEditingHost = (el) => {
    const parent = /** @type {HTMLElement | null} */ (flatParentElement(el));
    return el.isContentEditable && !(parent && parent.isContentEditable);
  };

  /** Explicit role (first token) or the implicit one of the element; null when none. */
  function roleOf(el) {
    const explicit = (el.getAttribute('role') || '').trim().toLowerCase().split(/\s+/)[0];
    if (explicit) return explicit === 'none' || explicit === 'presentation' ? null : explicit;
    const tag = el.localName;
    switch (tag) {
      case 'a':
      case 'area':
        return el.hasAttribute('href') ? 'link' : null;
      case 'button':
        return 'button';
      case 'input':
        return inputRole(el);
      case 'textarea':
        return 'textbox';
      case 'select':
        return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'option':
        return 'option';
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6':
        return 'heading';
      case 'img':
        return el.getAttribute('alt') === '' && !el.getAttribute('aria-label') && !el.title ? null : 'img';
      case 'nav':
        return 'navigation';
      case 'main':
        return 'main';
      case 'aside':
        return 'complementary';
      case 'header':
        return el.closest('article, aside, main, nav, section') ? null : 'banner';
      case 'footer':
        return el.closest('article, aside, main, nav, section') ? null : 'contentinfo';
      case 'form':
        return 'form';
      case 'search':
        return 'search';
      case 'section':
        return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : null;
      case 'ul': case 'ol': case 'menu':
        return 'list';
      case 'li':
        return 'listitem';
      case 'table':
        return 'table';
      case 'tr':
        return 'row';
      case 'td':
        return 'cell';
      case 'th':
        return el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader';
      case 'dialog':
        return 'dialog';
      case 'fieldset': case 'details':
        return 'group';
      case 'progress':
        return 'progressbar';
      case 'meter':
        return 'meter';
      case 'hr':
        return 'separator';
      case 'article':
        return 'article';
      case 'figure':
        return 'figure';
      case 'output':
        return 'status';
      default:
        return isEditingHost(el) ? 'textbox' : null;
    }
  }

  /** The accessible name, simplified from accname: labelledby, aria-label, labels, alt, content, title. */
  function nameOf(el, role = roleOf(el)) {
    const tree = el.getRootNode();
    const named = (text) => clip(collapse(text), SNIPPET);
    const labelledby = (el.getAttribute('aria-labelledby') || '').trim();
    if (labelledby && tree.getElementById) {
      const text = labelledby
        .split(/\s+/)
        .map((id) => tree.getElementById(id))
        .filter(Boolean)
        .map((n) => textOf(n, { accessible: true, limit: 1000 }))
        .join(' ');
      if (collapse(text)) return named(text);
    }
    const label = el.getAttribute('aria-label');
    if (label && label.trim()) return named(label);
    const tag = el.localName;
    if (tag === 'input') {
      const type = (el.type || 'text').toLowerCase();
      if (type === 'submit' || type === 'reset' || type === 'button') {
        return named(el.value || (type === 'submit' ? 'Submit' : type === 'reset' ? 'Reset' : ''));
      }
      if (type === 'image') return named(el.alt || el.title || 'Submit');
    }
    if (el.labels && el.labels.length) {
      const text = [...el.labels].map((l) => textOf(l, { skip: el, accessible: true, limit: 1000 })).join(' ');
      if (collapse(text)) return named(text);
    }
    if ((tag === 'img' || tag === 'area') && el.getAttribute('alt')) return named(el.getAttribute('alt'));
    const caption = { fieldset: 'legend', table: 'caption', figure: 'figcaption' }[tag];
    if (caption) {
      const child = [...el.children].find((c) => c.localName === caption);
      if (child && textOf(child)) return named(textOf(child, { accessible: true, limit: 1000 }));
    }
    if (NAME_FROM_CONTENT.has(role)) {
      const text = textOf(el, { accessible: true, limit: 1000 });
      if (text) return named(text);
    }
    if (el.title) return named(el.title);
    if (el.getAttribute('placeholder')) return named(el.getAttribute('placeholder'));
    return '';
  }

  function ariaStates(el, role) {
    const states = [];
    const aria = (name) => el.getAttribute(`aria-${name}`);
    if (el.matches(':disabled') || aria('disabled') === 'true') states.push('disabled');
    if (el.indeterminate || aria('checked') === 'mixed' || aria('pressed') === 'mixed') states.push('mixed');
    else if ((el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio') && el.checked) || aria('checked') === 'true') {
      states.push('checked');
    }
    if (aria('pressed') === 'true') states.push('pressed');
    if ((el.localName === 'option' && el.selected) || aria('selected') === 'true') states.push('selected');
    if (aria('expanded') === 'true') states.push('expanded');
    if (aria('expanded') === 'false') states.push('collapsed');
    if (el.required || aria('required') === 'true') states.push('required');
    if (el.readOnly || aria('readonly') === 'true') states.push('readonly');
    if (aria('invalid') && aria('invalid') !== 'false') states.push('invalid');
    if (aria('current') && aria('current') !== 'false') states.push('current');
    if (el.localName === 'dialog' && el.open) states.push('open');
    if (el === deepActiveElement(el.ownerDocument)) states.push('focused');
    return states;
  }

  function fieldValue(el) {
    if (el.localName === 'input' && el.type === 'password') return el.value ? PASSWORD_MASK : '';
    if (el.localName === 'input' && el.type === 'file') return [...(el.files || [])].map((f) => f.name).join(', ');
    if (el.localName === 'select') return el.selectedOptions.length ? collapse(el.selectedOptions[0].text) : '';
    return el.value;
  }

  function ariaTree(roles, name, maxDepth) {
    const wanted = roles && roles.length ? new Set(roles.map((r) => String(r).toLowerCase())) : null;
    const needle = name ? String(name).toLowerCase() : '';
    const ctx = context();
    const nodes = [];
    let total = 0;
    let truncated = false;
    const visit = (el, depth) => {
      const style = styleOf(el);
      if (style.display === 'none' || el.getAttribute('aria-hidden') === 'true' || el.inert) return;
      let below = depth;
      const role = style.visibility === 'visible' ? roleOf(el) : null;
      if (role) {
        const accessibleName = nameOf(el, role);
        if ((!wanted || wanted.has(role)) && accessibleName.toLowerCase().includes(needle)) {
          total += 1;
          below = depth + 1;
          if (depth >= maxDepth || nodes.length >= MAX_ARIA_NODES) {
            truncated = true;
          } else {
            const node = { role, name: accessibleName, depth, selector: cssPath(el, ctx), states: ariaStates(el, role) };
            if (role === 'heading') node.level = Number(el.getAttribute('aria-level')) || Number(el.localName.slice(1)) || 2;
            if (['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider'].includes(role) && 'value' in el) {
              const value = fieldValue(el);
              if (value) node.value = clip(value, SNIPPET);
            }
            nodes.push(node);
          }
        }
      }
      // A drop-down's options are not part of the page until it opens.
      if (role === 'combobox' && el.localName === 'select') return;
      for (const child of flatChildNodes(el)) if (child.nodeType === Node.ELEMENT_NODE) visit(child, below);
    };
    visit(document.body || document.documentElement, 0);
    return { nodes, total, truncated };
  }

  // ---- element state ----------------------------------------------------------------------------

  const FORM_CONTROLS = new Set(['button', 'input', 'select', 'textarea', 'option', 'optgroup', 'fieldset']);
  const NOT_EDITABLE_INPUTS = new Set(['button', 'submit', 'reset', 'image', 'checkbox', 'radio', 'file', 'hidden', 'range', 'color']);
  const CHECKABLE_ROLES = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio']);

  function isEnabled(el) {
    if (FORM_CONTROLS.has(el.localName) && el.matches(':disabled')) return false;
    for (let n = el; n; n = flatParentElement(n)) if (n.getAttribute('aria-disabled') === 'true') return false;
    return true;
  }

  function elementState(el) {
    const tag = el.localName;
    const enabled = isEnabled(el);
    let editable = null;
    if ((tag === 'input' && !NOT_EDITABLE_INPUTS.has(el.type)) || tag === 'textarea') {
      editable = enabled && !el.readOnly && el.getAttribute('aria-readonly') !== 'true';
    } else if (tag === 'select') {
      editable = enabled;
    } else if (el.isContentEditable) {
      editable = enabled && el.getAttribute('aria-readonly') !== 'true';
    }
    let checked = null;
    if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) checked = el.checked;
    else if (CHECKABLE_ROLES.has(roleOf(el)) && el.hasAttribute('aria-checked')) checked = el.getAttribute('aria-checked') === 'true';
    let selected = null;
    if (tag === 'option') selected = el.selected;
    else if (el.hasAttribute('aria-selected')) selected = el.getAttribute('aria-selected') === 'true';
    return {
      attached: el.isConnected,
      visible: isRendered(el),
      enabled,
      editable,
      checked,
      focused: el === deepActiveElement(el.ownerDocument),
      selected,
      in_viewport: inViewport(el),
    };
  }

  // ---- the API ----------------------------------------------------------------------------------

  function queryDom(selector, limit) {
    const ctx = context();
    const matches = /** @type {HTMLElement[]} */ (deepQueryAll(selector));
    const elements = matches.slice(0, limit).map((el) => {
      const attributes = {};
      for (const attr of [...el.attributes].filter((a) => a.name !== 'id' && a.name !== 'class').slice(0, LISTED_ATTRIBUTES)) {
        attributes[attr.name] = clip(attr.value, ATTRIBUTE_VALUE);
      }
      return {
        tag: el.localName,
        id: el.id || null,
        classes: [...el.classList].slice(0, LISTED_ATTRIBUTES),
        text: clip(collapse(el.innerText !== undefined ? el.innerText : el.textContent), SNIPPET),
        attributes,
        visible: isRendered(el),
        in_shadow_root: inShadowRoot(el),
        selector: cssPath(el, ctx),
      };
    });
    return { total: matches.length, elements, truncated: matches.length > elements.length };
  }

  function visibleText(selector, maxChars) {
    const root = selector ? requireElement(selector) : document.body || document.documentElement;
    const text = renderedText(root);
    if (text.length <= maxChars) return { text, truncated: false, chars: text.length };
    const cut = text.length - maxChars;
    return { text: `${text.slice(0, maxChars)}\n… [truncated: ${cut} more chars]`, truncated: true, chars: text.length };
  }

  function computedStyles(el, properties) {
    const style = styleOf(el);
    const out = {};
    const names = properties && properties.length ? properties : DEFAULT_STYLES;
    for (const name of names.slice(0, MAX_STYLES)) {
      const css = name.startsWith('--') ? name : name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
      out[name] = clip(style.getPropertyValue(css), STYLE_VALUE);
    }
    return out;
  }

  const VALUE_TAGS = new Set(['input', 'textarea', 'select', 'option', 'button', 'output', 'li', 'meter', 'progress', 'data']);
  const DISABLE_TAGS = new Set(['button', 'input', 'select', 'textarea', 'option', 'optgroup', 'fieldset']);

  function attributes(el) {
    const attrs = {};
    const tag = el.localName;
    const password = tag === 'input' && el.type === 'password';
    for (const attr of [...el.attributes].slice(0, MAX_ATTRIBUTES)) {
      const masked = password && attr.name === 'value' && attr.value;
      attrs[attr.name] = masked ? PASSWORD_MASK : clip(attr.value, FULL_VALUE);
    }
    const out = { tag, attributes: attrs };
    if (el.attributes.length > MAX_ATTRIBUTES) out.attributes_omitted = el.attributes.length - MAX_ATTRIBUTES;
    if (VALUE_TAGS.has(tag)) {
      if (password) out.value = el.value ? PASSWORD_MASK : '';
      else out.value = typeof el.value === 'string' ? clip(el.value, FULL_VALUE) : el.value;
    }
    if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) out.checked = el.checked;
    if (DISABLE_TAGS.has(tag)) out.disabled = el.disabled;
    if (tag === 'option') out.selected = el.selected;
    return out;
  }

  function countElements(selector) {
    checkSelector(selector);
    let count = 0;
    let inShadow = 0;
    for (const scope of scopes()) {
      const n = scope.querySelectorAll(selector).length;
      count += n;
      if (scope !== document) inShadow += n;
    }
    return { count, in_shadow_roots: inShadow };
  }

  function pageMetadata() {
    const content = (selector) => {
      const meta = document.querySelector(selector);
      return meta ? clip(meta.getAttribute('content') || '', FULL_VALUE) : null;
    };
    const og = {};
    const twitter = {};
    for (const meta of document.querySelectorAll('meta[property], meta[name]')) {
      const key = (meta.getAttribute('property') || meta.getAttribute('name') || '').trim().toLowerCase();
      const [group, prefix] = key.startsWith('og:') ? [og, 3] : key.startsWith('twitter:') ? [twitter, 8] : [null, 0];
      const field = key.slice(prefix);
      if (group && field && !(field in group) && Object.keys(group).length < MAX_META) {
        group[field] = clip(meta.getAttribute('content') || '', FULL_VALUE);
      }
    }
    const canonical = /** @type {HTMLLinkElement | null} */ (document.querySelector('link[rel~="canonical" i][href]'));
    const count = (selector) => countElements(selector).count;
    return {
      title: clip(document.title, FULL_VALUE),
      url: location.href,
      lang: document.documentElement.lang || null,
      charset: document.characterSet,
      description: content('meta[name="description" i]'),
      canonical: canonical ? canonical.href : null,
      og,
      twitter,
      counts: {
        links: count('a[href], area[href]'),
        images: count('img'),
        forms: count('form'),
        iframes: count('iframe, frame'),
      },
      ready_state: document.readyState,
    };
  }

  function findByText(text, exact, limit) {
    const needle = exact ? collapse(text) : collapse(text).toLowerCase();
    if (!needle) throw new Error('find_by_text needs a non-empty text');
    const fold = (s) => (exact ? collapse(s) : collapse(s).toLowerCase());
    const matches = (s) => (exact ? fold(s) === needle : fold(s).includes(needle));
    const attributeMatch = (el) => {
      const tag = el.localName;
      const hasValue = (tag === 'input' && !['password', 'hidden'].includes(el.type)) || tag === 'textarea';
      if (hasValue && el.value && matches(el.value)) return ['value', el.value];
      for (const name of ['placeholder', 'aria-label']) {
        const value = el.getAttribute(name);
        if (value && matches(value)) return [name, value];
      }
      return null;
    };
    const hits = [];
    // Returns whether el's text or a descendant's matched; text that does not contain the
    // needle cannot contain it in any descendant either, so the text test stops there.
    const visit = (el, textPossible) => {
      if (NOT_TEXT.has(el.localName)) return false;
      let own = false;
      let possible = false;
      let ownText = '';
      if (textPossible) {
        ownText = textOf(el);
        possible = fold(ownText).includes(needle);
        own = possible && matches(ownText);
      }
      const at = hits.length;
      let below = false;
      for (const child of flatChildNodes(el)) {
        if (child.nodeType === Node.ELEMENT_NODE && visit(child, possible)) below = true;
      }
      const attribute = attributeMatch(el);
      if (own && !below) hits.splice(at, 0, { el, by: 'text', text: ownText });
      else if (attribute) hits.splice(at, 0, { el, by: attribute[0], text: attribute[1] });
      return own || below;
    };
    visit(document.body || document.documentElement, true);
    const ctx = context();
    const elements = hits.slice(0, limit).map((hit) => ({
      tag: hit.el.localName,
      text: clip(collapse(hit.text), SNIPPET),
      matched_by: hit.by,
      selector: cssPath(hit.el, ctx),
      visible: isRendered(hit.el),
    }));
    return { total: hits.length, elements, truncated: hits.length > elements.length };
  }

  const isField = (el) =>
    (el.localName === 'input' && !['button', 'submit', 'reset', 'image'].includes(el.type)) ||
    el.localName === 'select' ||
    el.localName === 'textarea';

  function field(el) {
    const checkable = el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio');
    return {
      name: el.getAttribute('name') || null,
      id: el.id || null,
      type: el.type,
      label: nameOf(el) || null,
      value: clip(el.localName === 'select' ? el.value : fieldValue(el), FULL_VALUE),
      checked: checkable ? el.checked : null,
      selected:
        el.localName === 'select'
          ? [...el.selectedOptions].slice(0, MAX_OPTIONS).map((o) => ({ value: clip(o.value, SNIPPET), text: clip(collapse(o.text), SNIPPET) }))
          : null,
      disabled: el.matches(':disabled'),
      required: el.required,
    };
  }

  function formValues(selector) {
    const ctx = context();
    let truncated = false;
    const fields = (list) => {
      if (list.length > MAX_FIELDS) truncated = true;
      return list.slice(0, MAX_FIELDS).map(field);
    };
    /** @type {any[]} */
    let containers = selector ? [requireElement(selector)] : deepQueryAll('form');
    if (containers.length > MAX_FORMS) {
      truncated = true;
      containers = containers.slice(0, MAX_FORMS);
    }
    const forms = containers.map((el) => {
      const isForm = el.localName === 'form';
      return {
        selector: cssPath(el, ctx),
        id: el.id || null,
        name: el.getAttribute('name') || null,
        action: isForm ? el.action : null,
        method: isForm ? el.method : null,
        fields: fields(isForm ? [...el.elements].filter(isField) : deepElements(el).filter(isField)),
      };
    });
    const outside = selector ? [] : fields(deepElements(document).filter((el) => isField(el) && !(/** @type {HTMLInputElement} */ (el).form)));
    return { forms, outside_forms: outside, truncated };
  }

  // ---- the ask tools' reads, waits, and failure evidence -----------------------------------------

  /**
   * get_page_dom: the HTML of every match, in queryDom's order, whitespace collapsed, within
   * maxChars for all of them together.
   * @param {string} selector
   * @param {number} maxChars
   */
  function htmlMatches(selector, maxChars) {
    const found = deepQueryAll(selector);
    let budget = maxChars;
    /** @type {{ inShadowRoot: boolean, html: string }[]} */
    const items = [];
    for (const el of found) {
      if (budget <= 0) break;
      let html = el.outerHTML.replace(/\s+/g, ' ');
      if (html.length > budget) html = `${html.slice(0, budget)}…`;
      budget -= html.length;
      items.push({ inShadowRoot: inShadowRoot(el), html });
    }
    return { total: found.length, shown: items.length, items };
  }

  /**
   * The first match of selector once there is one (checked on every DOM change), or null at
   * the deadline; a selector the browser cannot parse throws at once.
   * @param {string} selector
   * @param {number} timeoutMs
   */
  async function waitForSelector(selector, timeoutMs) {
    let hit = deepQuery(selector);
    if (hit) return hit;
    await whenTrue(() => !!(hit = deepQuery(selector)), timeoutMs);
    return hit;
  }

  /** The body's innerText and the text of every open shadow root. */
  function pageText() {
    const parts = [document.body ? document.body.innerText : ''];
    for (const root of shadowRoots(document)) parts.push(root.textContent || '');
    return parts.join('\n');
  }

  /**
   * browser_wait: true once the page's text has text (if given), has not gone (if given), and
   * selector (if given) matches; false at the deadline. Checked on every DOM change.
   * @param {string | null} text
   * @param {string | null} gone
   * @param {string | null} selector
   * @param {number} timeoutMs
   */
  function waitFor(text, gone, selector, timeoutMs) {
    const holds = () => {
      const all = pageText();
      if (text !== null && !all.includes(text)) return false;
      if (gone !== null && all.includes(gone)) return false;
      if (selector !== null && !deepQuery(selector)) return false;
      return true;
    };
    return whenTrue(holds, timeoutMs, { characterData: true });
  }

  /**
   * The page's HTML with its open shadow roots (getHTML; outerHTML where the browser is too old
   * to have it): Gemini keeps parts of its turns in shadow roots.
   */
  function pageHtml() {
    const root = document.documentElement;
    return root.getHTML ? root.getHTML({ shadowRoots: shadowRoots(document) }) : root.outerHTML;
  }

  /**
   * The newest elements matching any of selectors (a failure's turns), newest last, until their
   * HTML passes budget; and how many there are. The opening tag is written out rather than
   * cloned: cloning a site's custom element would run its constructor. Turns nested in a
   * matched turn are left to their parent.
   * @param {string[]} selectors
   * @param {number} budget
   */
  function turnsHtml(selectors, budget) {
    const roots = shadowRoots(document);
    /** @param {string} v */
    const quote = (v) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
    /** @param {Element} el */
    const open = (el) => `<${el.localName}${[...el.attributes].map((a) => ` ${a.name}="${quote(a.value)}"`).join('')}>`;
    /** @param {Element} el */
    const html = (el) => (el.getHTML ? `${open(el)}${el.getHTML({ shadowRoots: roots })}</${el.localName}>` : el.outerHTML);
    const found = [...document.querySelectorAll(selectors.join(', '))];
    const turns = found.filter((el) => !found.some((other) => other !== el && other.contains(el)));
    /** @type {string[]} */
    const picked = [];
    let size = 0;
    for (let i = turns.length - 1; i >= 0 && size < budget; i--) {
      const text = html(turns[i]);
      picked.unshift(text);
      size += text.length;
    }
    return { turns: picked, total: turns.length };
  }

  // ---- Playwright locators (bridge/tools/locating.py) -------------------------------------------
  // What a Playwright locator for an element can be made of, and how many elements each
  // candidate locator matches here, with Playwright's matching rules as far as they matter for
  // choosing one: the Python side (bridge/tools/codegen.py) picks the first candidate that finds
  // exactly this element, so a generated test acts on the element the agent acted on.

  /**
   * The text of el's <label>s (its own text left out), as Playwright's getByLabel reads them.
   * @param {any} el
   */
  function labelText(el) {
    /** @type {Element[]} */
    const labels = el.labels ? [...el.labels] : [];
    return collapse(labels.map((l) => textOf(l, { skip: el, limit: 1000 })).join(' '));
  }

  /** The texts a locator may use for el, its value and checked state (browser_verify_value). */
  function locatorFacts(el) {
    const role = roleOf(el);
    const labels = labelText(el);
    const checkable = el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio');
    let checked = checkable ? el.checked : null;
    if (checked === null && el.hasAttribute('aria-checked')) checked = el.getAttribute('aria-checked') === 'true';
    const editable = ['input', 'textarea', 'select'].includes(el.localName);
    return {
      tag: el.localName,
      role,
      name: role ? nameOf(el, role) : '',
      label: labels || collapse(el.getAttribute('aria-label') || ''),
      placeholder: collapse(el.getAttribute('placeholder') || ''),
      text: role === 'textbox' || editable ? '' : textOf(el, { limit: 1000 }),
      test_id: el.getAttribute('data-testid') || '',
      css: cssPath(el, context()),
      value: editable ? String(el.value) : null,
      checked,
      visible: isRendered(el),
    };
  }

  /** Playwright's text matching: whitespace collapsed; case-insensitive substring unless exact. */
  function textMatcher(text, exact) {
    const wanted = exact ? collapse(text) : collapse(text).toLowerCase();
    return (s) => (exact ? collapse(s) === wanted : collapse(s).toLowerCase().includes(wanted));
  }

  const ariaHidden = (el) => {
    for (let n = el; n; n = flatParentElement(n)) if (n.getAttribute('aria-hidden') === 'true') return true;
    return false;
  };

  /** The elements a locator spec ({kind, value, name, exact}) matches, in document order. */
  function locatorElements(spec) {
    const all = deepElements(document);
    const match = textMatcher(spec.value, spec.exact);
    switch (spec.kind) {
      case 'role': {
        const byName = spec.name == null ? null : textMatcher(spec.name, spec.exact);
        return all.filter((el) => roleOf(el) === spec.value && !ariaHidden(el)
          && el.checkVisibility({ visibilityProperty: true })
          && (!byName || byName(nameOf(el, spec.value))));
      }
      case 'label':
        return all.filter((el) => {
          const labels = labelText(el);
          return (labels && match(labels)) || (el.hasAttribute('aria-label') && match(el.getAttribute('aria-label') || ''));
        });
      case 'placeholder':
        return all.filter((el) => el.hasAttribute('placeholder') && match(el.getAttribute('placeholder') || ''));
      case 'test_id':
        return all.filter((el) => el.getAttribute('data-testid') === spec.value);
      case 'text': {
        // The innermost elements whose text matches (a parent of a match is not one).
        const hits = new Set(all.filter((el) => !NOT_TEXT.has(el.localName) && match(textOf(el, { limit: 10000 }))));
        return [...hits].filter((el) => ![...hits].some((other) => other !== el && el.contains(other)));
      }
      case 'css':
        return deepQueryAll(spec.value);
      default:
        throw new Error(`unknown locator kind ${spec.kind}`);
    }
  }

  /** For each spec: how many elements it matches, and where el is among them (-1: not). */
  function locatorMatches(el, specs) {
    return specs.map((spec) => {
      const found = locatorElements(spec);
      return { count: found.length, index: found.indexOf(el) };
    });
  }

  /** For each spec: how many elements it matches and the index of the first visible one (-1:
   * none), with the accessible names of the role's visible elements (what a failed
   * verification says it saw instead). */
  function locatorFind(specs) {
    return specs.map((spec) => {
      const found = locatorElements(spec);
      const seen = spec.kind === 'role'
        ? locatorElements({ kind: 'role', value: spec.value, name: null, exact: false })
          .filter(isRendered).slice(0, 20).map((el) => nameOf(el, spec.value))
        : [];
      return { count: found.length, visible: found.findIndex(isRendered), seen };
    });
  }

  const api = {
    version: VERSION,
    // page-wide: called through PageScript
    queryDom,
    visibleText,
    countElements,
    pageMetadata,
    ariaTree,
    findByText,
    formValues,
    htmlMatches,
    pageHtml,
    turnsHtml,
    locatorFind,
    // called with returnByValue false: they answer an element (PageScript.call_object)
    deepQuery,
    waitForSelector,
    waitFor,
    // element ones: called with the element first
    computedStyles,
    checkVisibility,
    attributes,
    elementState,
    locatorFacts,
    locatorMatches,
  };

  Object.defineProperty(window, '__bridgeDom', { value: api, configurable: true, enumerable: false });
  return VERSION;
})();
