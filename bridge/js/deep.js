// @ts-check
// The one module for open shadow roots, deep queries and the element at a point, shared by
// every in-page script. The script builder (bridge/cdp/page_script.py) puts this file before
// each script inside one function, so these names belong to that script, never to the page's
// global scope. Closed shadow roots cannot be reached from the page and are not looked for.
//
// Functions that take an element may run in another frame's realm than the element's (a remote
// object lives in the context that made it): they take window, document and styles from the
// element, and tell shadow roots by shape, as instanceof does not work across realms.

/**
 * Is node a shadow root (by shape, so across realms)?
 * @param {Node | null | undefined} node
 * @returns {node is ShadowRoot}
 */
function isShadowRoot(node) {
  return !!node && node.nodeType === Node.DOCUMENT_FRAGMENT_NODE && !!(/** @type {ShadowRoot} */ (node).host);
}

/**
 * The window of el's own frame.
 * @param {Element} el
 * @returns {Window}
 */
function windowOf(el) {
  return (el.ownerDocument && el.ownerDocument.defaultView) || window;
}

/**
 * el's computed style, from el's own frame.
 * @param {Element} el
 * @returns {CSSStyleDeclaration}
 */
function styleOf(el) {
  return windowOf(el).getComputedStyle(el);
}

/**
 * Every open shadow root under root (root's own included when it is a host), outermost first,
 * each before the roots nested in it.
 * @param {ParentNode} root
 * @returns {ShadowRoot[]}
 */
function shadowRoots(root) {
  /** @type {ShadowRoot[]} */
  const out = [];
  /** @param {ParentNode} scope */
  const visit = (scope) => {
    for (const el of scope.querySelectorAll('*')) {
      if (el.shadowRoot) {
        out.push(el.shadowRoot);
        visit(el.shadowRoot);
      }
    }
  };
  const own = /** @type {Element} */ (root).shadowRoot;
  if (own) {
    out.push(own);
    visit(own);
  }
  visit(root);
  return out;
}

/**
 * Every element under root in document order, a host's shadow tree right after the host.
 * @param {ParentNode} root
 * @returns {Element[]}
 */
function deepElements(root) {
  /** @type {Element[]} */
  const out = [];
  /** @param {ParentNode} scope */
  const visit = (scope) => {
    for (const el of scope.querySelectorAll('*')) {
      out.push(el);
      if (el.shadowRoot) visit(el.shadowRoot);
    }
  };
  const own = /** @type {Element} */ (root).shadowRoot;
  if (own) visit(own);
  visit(root);
  return out;
}

/**
 * Throws the browser's SyntaxError for a selector it cannot parse (even where nothing would be
 * searched).
 * @param {string} selector
 */
function checkSelector(selector) {
  document.createDocumentFragment().querySelector(selector);
}

/**
 * The scopes a selector is run in: the document and every open shadow root in it.
 * @param {Document} [doc]
 * @returns {(Document | ShadowRoot)[]}
 */
function scopes(doc = document) {
  return [doc, ...shadowRoots(doc)];
}

/**
 * All matches of selector in the document and its open shadow roots, in deepElements order.
 * @param {string} selector
 * @param {Document} [doc]
 * @returns {Element[]}
 */
function deepQueryAll(selector, doc = document) {
  checkSelector(selector);
  /** @type {Set<Element>} */
  const hits = new Set();
  for (const scope of scopes(doc)) for (const el of scope.querySelectorAll(selector)) hits.add(el);
  return hits.size ? deepElements(doc).filter((el) => hits.has(el)) : [];
}

/**
 * The first match of selector: in the document itself if any, else in the first open shadow
 * root (outermost first, in document order) that has one.
 * @param {string} selector
 * @param {Document} [doc]
 * @returns {Element | null}
 */
function deepQuery(selector, doc = document) {
  checkSelector(selector);
  for (const scope of scopes(doc)) {
    const hit = scope.querySelector(selector);
    if (hit) return hit;
  }
  return null;
}

/**
 * The parent in the rendered (flat) tree: the slot for a slotted node, the host for a shadow
 * root and for the top of a shadow tree.
 * @param {Node} node
 * @returns {Node | null}
 */
function flatParent(node) {
  if (isShadowRoot(node)) return node.host;
  const slot = /** @type {Element | Text} */ (node).assignedSlot;
  if (slot) return slot;
  const parent = node.parentNode;
  return isShadowRoot(parent) ? parent.host : parent;
}

/**
 * The flat-tree parent when it is an element, else null.
 * @param {Node} node
 * @returns {Element | null}
 */
function flatParentElement(node) {
  const parent = flatParent(node);
  return parent && parent.nodeType === Node.ELEMENT_NODE ? /** @type {Element} */ (parent) : null;
}

/**
 * Children in the flat tree: a host's shadow tree, a slot's assigned nodes (or its fallback).
 * @param {Node} node
 * @returns {ArrayLike<Node> & Iterable<Node>}
 */
function flatChildNodes(node) {
  const el = /** @type {Element} */ (node);
  if (el.shadowRoot) return el.shadowRoot.childNodes;
  if (el.localName === 'slot') {
    const assigned = /** @type {HTMLSlotElement} */ (el).assignedNodes();
    if (assigned.length) return assigned;
  }
  return node.childNodes;
}

/**
 * Is node el itself, or below it in the flat tree?
 * @param {Node} el
 * @param {Node} node
 */
function flatContains(el, node) {
  for (let n = /** @type {Node | null} */ (node); n; n = flatParent(n)) if (n === el) return true;
  return false;
}

/**
 * Is el inside an open shadow root?
 * @param {Element} el
 */
function inShadowRoot(el) {
  return isShadowRoot(el.getRootNode());
}

/**
 * A short human description of an element: div#x, button.primary.large (up to two classes,
 * only when it has no id unless classesWithId: div#x.modal); "nothing" for none.
 * @param {Element | null | undefined} el
 * @param {{ classesWithId?: boolean }} [options]
 */
function describe(el, { classesWithId = false } = {}) {
  if (!el || el.nodeType !== Node.ELEMENT_NODE) return 'nothing';
  let out = el.localName;
  if (el.id) out += `#${el.id}`;
  if (!el.id || classesWithId) for (const c of [...el.classList].slice(0, 2)) out += `.${c}`;
  return out;
}

/**
 * The topmost element at a point of doc's viewport, inside open shadow roots too.
 * @param {Document} doc
 * @param {number} x
 * @param {number} y
 * @returns {Element | null}
 */
function deepElementFromPoint(doc, x, y) {
  let hit = doc.elementFromPoint(x, y);
  while (hit && hit.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  return hit;
}

/**
 * The focused element, inside open shadow roots too.
 * @param {Document} doc
 * @returns {Element | null}
 */
function deepActiveElement(doc) {
  let active = doc.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
  return active;
}

/**
 * Resolves with true as soon as holds() is true (checked now and on every DOM change of doc),
 * or with false at the deadline. Event-driven: never a fixed interval.
 * @param {() => boolean} holds
 * @param {number} timeoutMs
 * @param {{ characterData?: boolean }} [options]
 * @returns {Promise<boolean>}
 */
function whenTrue(holds, timeoutMs, { characterData = false } = {}) {
  return new Promise((resolve) => {
    if (holds()) {
      resolve(true);
      return;
    }
    const observer = new MutationObserver(() => {
      if (holds()) finish(true);
    });
    const timer = setTimeout(() => finish(false), timeoutMs);
    /** @param {boolean} held */
    function finish(held) {
      observer.disconnect();
      clearTimeout(timer);
      resolve(held);
    }
    observer.observe(document, { subtree: true, childList: true, attributes: true, characterData });
  });
}
