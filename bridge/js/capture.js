// @ts-check
// A capture's view of a page (bridge/providers/capture/take.py, docs/captures.md).
//
// 'capture': every element under <body> in document order, with its tag, its attributes and
// the LENGTHS of its own text nodes (never their text), and for each CSS selector asked the
// indices of the elements it matches. Each element is marked when it stands inside a region of
// the person's content ('c') or inside a list or the navigation ('l'), where even an
// aria-label may be a conversation's title. What may be kept of an attribute is decided in
// Python (bridge.providers.capture.dom); this only reports.
//
// 'match': the same selectors against a capture rebuilt as a document (matching.py), where
// every element carries its index in data-bridge-i.
//
// 'browser': the browser's name and full version, for the capture's versions.
//
// Called with Runtime.callFunctionOn in an isolated world: the page's own scripts cannot
// change what it reports (querySelectorAll and the DOM getters are the world's own).
(
/**
 * @param {'capture' | 'match' | 'browser'} mode
 * @param {string[]} selectors the CSS selectors whose matches are wanted
 * @param {string[]} content selectors of the regions that hold the person's content
 * @param {number} maxNodes at most this many elements are reported ('truncated' says so)
 */
function (mode, selectors, content, maxNodes) {
  /** @type {Map<Element, number>} */
  const index = new Map();
  /** @type {Array<{i: number, p: number, tag: string, attrs: Record<string, string>, text: number[], c: number, l: number}>} */
  const nodes = [];
  let truncated = false;

  /** @param {string} css @returns {Element[] | string} */
  const all = (css) => {
    try {
      return Array.from(document.querySelectorAll(css));
    } catch (error) {
      return String(error instanceof Error ? error.message : error);
    }
  };

  if (mode === 'browser') {
    // The browser's full version (the user agent string says only "156.0.0.0" since Chrome
    // reduced it): its brands and versions, nothing else of the machine.
    /** @type {any} */
    const data = /** @type {any} */ (navigator).userAgentData;
    if (!data || typeof data.getHighEntropyValues !== 'function') return Promise.resolve({ browser: '' });
    return data.getHighEntropyValues(['fullVersionList']).then(
      /** @param {{fullVersionList?: Array<{brand: string, version: string}>}} values */
      (values) => {
        const list = values.fullVersionList || [];
        const found = list.find((b) => /Chrom|Edge/.test(b.brand)) || list[0];
        return { browser: found ? `${found.brand}/${found.version}` : '' };
      },
      () => ({ browser: '' }));
  }

  if (mode === 'match') {
    /** @type {Record<string, number[] | string>} */
    const matches = {};
    for (const css of selectors) {
      const found = all(css);
      matches[css] = typeof found === 'string' ? found
        : found.map((el) => Number(el.getAttribute('data-bridge-i'))).filter((i) => i >= 0);
    }
    return { matches };
  }

  // Elements whose subtree is not walked: drawings, media, frames (no structure bridge
  // relies on lives inside them), and what is no page content at all.
  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'link', 'meta']);
  const LEAF = new Set(['svg', 'iframe', 'canvas', 'video', 'audio', 'picture', 'math']);
  const LIST_TAGS = new Set(['nav', 'aside', 'ul', 'ol', 'li']);
  const LIST_ROLES = new Set(['navigation', 'list', 'listitem', 'tree', 'treeitem', 'grid',
    'row', 'table', 'feed']);
  /** @type {Set<Element>} */
  const contentRoots = new Set();
  for (const css of content) {
    const found = all(css);
    if (typeof found !== 'string') for (const el of found) contentRoots.add(el);
  }

  /** @param {Element} el @param {number} parent @param {boolean} inContent @param {boolean} inList */
  const walk = (el, parent, inContent, inList) => {
    const tag = el.localName;
    if (SKIP.has(tag)) return;
    if (nodes.length >= maxNodes) {
      truncated = true;
      return;
    }
    const here = inContent || contentRoots.has(el);
    const role = el.getAttribute('role') || '';
    const listy = inList || LIST_TAGS.has(tag) || LIST_ROLES.has(role);
    const i = nodes.length;
    index.set(el, i);
    /** @type {Record<string, string>} */
    const attrs = {};
    for (const attribute of Array.from(el.attributes)) {
      attrs[attribute.name] = attribute.value.slice(0, 400);
    }
    /** @type {number[]} */
    const text = [];
    for (const child of Array.from(el.childNodes)) {
      if (child.nodeType === Node.TEXT_NODE) {
        const data = /** @type {Text} */ (child).data;
        if (data.trim()) text.push(data.length);
      }
    }
    nodes.push({ i, p: parent, tag, attrs, text, c: here ? 1 : 0, l: listy ? 1 : 0 });
    if (LEAF.has(tag)) return;
    for (const child of Array.from(el.children)) walk(child, i, here, listy);
  };
  if (document.body) walk(document.body, -1, false, false);

  /** @type {Record<string, number[] | string>} */
  const matches = {};
  for (const css of selectors) {
    const found = all(css);
    matches[css] = typeof found === 'string' ? found
      : found.map((el) => index.get(el) ?? -1).filter((i) => i >= 0);
  }
  return {
    nodes,
    matches,
    truncated,
    lang: document.documentElement.lang || '',
    url: location.href,
    browserLanguage: navigator.language || '',
    // The browser's name and version only, not the whole user agent.
    browser: (navigator.userAgent.match(/(?:HeadlessChrome|Chrome|Chromium|Edg)\/[\d.]+/) || [''])[0],
  };
}
)
