// Called with `this` = the element (Runtime.callFunctionOn). Resolves when the element can
// take the action (attached, visible, enabled/editable as asked, stable for a task, and
// actually hit at its centre), scrolling it into view first; or, at the deadline, with the
// reason it could not. Event-driven: re-checks on DOM mutations, scrolls, resizes and the
// ends of transitions/animations, never on a fixed interval.
async function (timeoutMs, checks) {
  const el = this;
  const describe = (n) => {
    if (!n || n.nodeType !== 1) return 'nothing';
    let s = n.tagName.toLowerCase();
    if (n.id) s += '#' + n.id;
    const cls = [...n.classList].slice(0, 2);
    if (cls.length) s += '.' + cls.join('.');
    return s;
  };
  const parentOf = (n) => n.parentElement || (n.parentNode && n.parentNode.host) || null;
  const nextTask = () =>
    new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve();
      channel.port2.postMessage(null);
    });
  const state = () => {
    if (!el.isConnected) return 'it is no longer in the page: take a new snapshot';
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.visibility === 'collapse') return 'not visible (visibility:hidden)';
    const rect = el.getBoundingClientRect();
    if (rect.width === 0 || rect.height === 0) {
      for (let n = el; n; n = parentOf(n)) {
        if (getComputedStyle(n).display === 'none') return `not visible (display:none on ${describe(n)})`;
      }
      return 'not visible (zero size)';
    }
    if (checks.enabled) {
      const disabled = el.disabled === true || el.getAttribute('aria-disabled') === 'true' ||
        (el.closest && el.closest('fieldset:disabled') && el.matches('input, select, textarea, button'));
      if (disabled) return 'disabled';
    }
    if (checks.editable) {
      const field = el.tagName === 'INPUT' || el.tagName === 'TEXTAREA';
      if (!(el.isContentEditable || (field && !el.readOnly))) return 'not editable';
    }
    return '';
  };
  const covering = (x, y) => {
    let hit = document.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    if (!hit) return 'its centre is outside the page';
    for (let n = hit; n; n = n.parentNode || n.host) if (n === el) return '';
    const label = hit.closest && hit.closest('label');
    if (label && label.control === el) return '';
    return `covered by ${describe(hit)}`;
  };
  const deadline = Date.now() + timeoutMs;
  let last = '';
  let previous = '';
  for (;;) {
    last = state();
    if (!last) {
      const before = el.getBoundingClientRect();
      const inView = before.top >= 0 && before.left >= 0 && before.bottom <= innerHeight && before.right <= innerWidth;
      if (!inView) el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      const r = el.getBoundingClientRect();
      const key = [r.x, r.y, r.width, r.height].join(',');
      if (key === previous) {
        const x = r.left + r.width / 2;
        const y = r.top + r.height / 2;
        last = checks.hit ? covering(x, y) : '';
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
        for (const e of events) removeEventListener(e, finish, true);
        resolve();
      }
      observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      for (const e of events) addEventListener(e, finish, true);
    });
    previous = '';
  }
}
