// @ts-check
// The browser tools' acting side (bridge/tools/actions.py, bridge/tools/browsing.py): injected
// once per frame as window.__bridgeActions; every function takes the element first and is
// called through PageScript.call_on (Runtime.callFunctionOn on the element), so it runs in the
// element's own frame.
(() => {
  const VERSION = '__BRIDGE_PAGE_VERSION__';
  if (window.__bridgeActions && window.__bridgeActions.version === VERSION) return VERSION;

  /** @typedef {{ enabled: boolean, editable: boolean, hit: boolean }} Checks */
  /** @typedef {{ ok: true, x: number, y: number, width: number, height: number } | { ok: false, reason: string }} Verdict */

  /** A promise that resolves one task later (a MessageChannel task: hidden tabs throttle timers). */
  const nextTask = () =>
    /** @type {Promise<void>} */ (
      new Promise((resolve) => {
        const channel = new MessageChannel();
        channel.port1.onmessage = () => resolve();
        channel.port2.postMessage(null);
      })
    );

  /**
   * Why el cannot take the action now ('' when it can, the hit test aside).
   * @param {Element} el
   * @param {Checks} checks
   */
  function state(el, checks) {
    if (!el.isConnected) return 'it is no longer in the page: take a new snapshot';
    const style = styleOf(el);
    if (style.visibility === 'hidden' || style.visibility === 'collapse') return 'not visible (visibility:hidden)';
    const rect = el.getBoundingClientRect();
    if (rect.width === 0 || rect.height === 0) {
      for (let n = /** @type {Element | null} */ (el); n; n = flatParentElement(n)) {
        if (styleOf(n).display === 'none') return `not visible (display:none on ${describe(n, { classesWithId: true })})`;
      }
      return 'not visible (zero size)';
    }
    const control = /** @type {HTMLInputElement} */ (el);
    if (checks.enabled) {
      const disabled = control.disabled === true || el.getAttribute('aria-disabled') === 'true' ||
        (el.closest('fieldset:disabled') && el.matches('input, select, textarea, button'));
      if (disabled) return 'disabled';
    }
    if (checks.editable) {
      const field = el.tagName === 'INPUT' || el.tagName === 'TEXTAREA';
      if (!(/** @type {HTMLElement} */ (el).isContentEditable || (field && !control.readOnly))) return 'not editable';
    }
    return '';
  }

  /**
   * What covers el at (x, y) of its frame's viewport ('' when el itself is hit).
   * @param {Element} el
   * @param {number} x
   * @param {number} y
   */
  function covering(el, x, y) {
    const hit = deepElementFromPoint(el.ownerDocument, x, y);
    if (!hit) return 'its centre is outside the page';
    if (flatContains(el, hit)) return '';
    const label = /** @type {HTMLLabelElement | null} */ (hit.closest('label'));
    if (label && label.control === el) return '';
    // The cover's classes too: an overlay is often known by its class (div#overlay.modal).
    return `covered by ${describe(hit, { classesWithId: true })}`;
  }

  /**
   * Resolves when el can take the action (attached, visible, enabled/editable as asked, stable
   * for a task, and actually hit at its centre), scrolling it into view first; or, at the
   * deadline, with the reason it could not. Event-driven: re-checks on DOM mutations, scrolls,
   * resizes and the ends of transitions/animations, never on a fixed interval.
   * @param {Element} el
   * @param {number} timeoutMs
   * @param {Checks} checks
   * @returns {Promise<Verdict>}
   */
  async function actionable(el, timeoutMs, checks) {
    const win = windowOf(el);
    const deadline = Date.now() + timeoutMs;
    let last = '';
    let previous = '';
    for (;;) {
      last = state(el, checks);
      if (!last) {
        const before = el.getBoundingClientRect();
        const inView = before.top >= 0 && before.left >= 0 && before.bottom <= win.innerHeight && before.right <= win.innerWidth;
        if (!inView) el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
        const r = el.getBoundingClientRect();
        const key = [r.x, r.y, r.width, r.height].join(',');
        if (key === previous) {
          const x = r.left + r.width / 2;
          const y = r.top + r.height / 2;
          last = checks.hit ? covering(el, x, y) : '';
          if (!last) return { ok: true, x, y, width: r.width, height: r.height };
        } else {
          previous = key;
          last = 'still moving';
          await nextTask(); // stable means: the same box one task later
          continue;
        }
      }
      const left = deadline - Date.now();
      if (left <= 0) return { ok: false, reason: last };
      await new Promise((resolve) => {
        const observer = new MutationObserver(finish);
        const timer = setTimeout(finish, left);
        const events = ['scroll', 'resize', 'transitionend', 'animationend'];
        function finish() {
          observer.disconnect();
          clearTimeout(timer);
          for (const e of events) win.removeEventListener(e, finish, true);
          resolve(undefined);
        }
        observer.observe(el.ownerDocument, { subtree: true, childList: true, attributes: true, characterData: true });
        for (const e of events) win.addEventListener(e, finish, true);
      });
      previous = '';
    }
  }

  /**
   * Focus el and select all its text (a field's, or a contenteditable's), so typing replaces it.
   * @param {Element} el
   */
  function selectAll(el) {
    /** @type {HTMLElement} */ (el).focus();
    if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
      /** @type {HTMLInputElement} */ (el).select();
    } else {
      const doc = el.ownerDocument;
      const range = doc.createRange();
      range.selectNodeContents(el);
      const selection = doc.getSelection();
      if (selection) {
        selection.removeAllRanges();
        selection.addRange(range);
      }
    }
    return true;
  }

  /**
   * Select the options of a <select> named by value, label or text; fires input and change.
   * @param {Element} el
   * @param {string[]} values
   * @returns {{ error: string } | { selected: string[] }}
   */
  function selectOptions(el, values) {
    if (el.tagName !== 'SELECT') return { error: 'not a <select> element' };
    const select = /** @type {HTMLSelectElement} */ (el);
    const wanted = new Set(values);
    const options = [...select.options];
    const matches = options.filter((o) => wanted.has(o.value) || wanted.has(o.label) || wanted.has(o.text.trim()));
    const found = new Set(matches.flatMap((o) => [o.value, o.label, o.text.trim()]));
    const missing = values.filter((v) => !found.has(v));
    if (missing.length) {
      const known = JSON.stringify(options.map((o) => o.label || o.value));
      return { error: `no option ${JSON.stringify(missing)}; options are ${known}` };
    }
    if (!select.multiple && matches.length > 1) return { error: 'a single <select> takes one value' };
    for (const o of options) o.selected = matches.includes(o);
    select.dispatchEvent(new Event('input', { bubbles: true }));
    select.dispatchEvent(new Event('change', { bubbles: true }));
    return { selected: matches.map((o) => o.value) };
  }

  /**
   * Why el cannot take count files ('' when it can).
   * @param {Element} el
   * @param {number} count
   */
  function fileInputProblem(el, count) {
    const input = /** @type {HTMLInputElement} */ (el);
    if (el.tagName !== 'INPUT' || input.type !== 'file') return 'not an <input type=file>';
    if (!input.multiple && count > 1) return 'this file input takes one file';
    return '';
  }

  /**
   * What kind of field el is: 'select', an input's type, 'contenteditable', else its tag.
   * @param {Element} el
   */
  function kind(el) {
    if (el.tagName === 'SELECT') return 'select';
    if (el.tagName === 'INPUT') return (/** @type {HTMLInputElement} */ (el).type || 'text').toLowerCase();
    return /** @type {HTMLElement} */ (el).isContentEditable ? 'contenteditable' : el.tagName.toLowerCase();
  }

  const api = {
    version: VERSION,
    actionable,
    selectAll,
    selectOptions,
    fileInputProblem,
    kind,
    /** @param {Element} el Is el in (or) a download link? */
    inDownloadLink: (el) => !!el.closest('a[download]'),
    /** @param {Element} el Is el still in its document? */
    isConnected: (el) => el.isConnected,
    /**
     * el scrolled into view, and its box in page coordinates (a screenshot's clip).
     * @param {Element} el
     */
    pageBox: (el) => {
      el.scrollIntoView({ block: 'center', behavior: 'instant' });
      const r = el.getBoundingClientRect();
      const win = windowOf(el);
      return { x: r.left + win.scrollX, y: r.top + win.scrollY, width: r.width, height: r.height };
    },
    /** @param {Element} el A checkbox's or radio's state; null for anything else. */
    checked: (el) => {
      const input = /** @type {HTMLInputElement} */ (el);
      return typeof input.checked === 'boolean' ? input.checked : null;
    },
  };

  Object.defineProperty(window, '__bridgeActions', { value: api, configurable: true, enumerable: false });
  return VERSION;
})();
