// @ts-check
// The vision group's page side (bridge/tools/operations/vision.py): input sent by coordinates
// scrolls the page on the compositor, after the input command has already returned, and
// smoothly in a person's Chrome. settle() answers once that scrolling is over, with the
// window's scroll position. Injected once per document as window.__bridgeVision.
(() => {
  const VERSION = '__BRIDGE_PAGE_VERSION__';
  if (window.__bridgeVision && window.__bridgeVision.version === VERSION) return VERSION;

  const api = {
    version: VERSION,
    /**
     * The scroll position once scrolling has ended: at once (two frames later) when nothing
     * scrolls, at 'scrollend' when something does, at limitMs at the latest (a background tab
     * may draw no frames).
     * @param {number} limitMs
     * @returns {Promise<{x: number, y: number}>}
     */
    settle: (limitMs) =>
      new Promise((resolve) => {
        let moving = false;
        let done = false;
        const onScroll = () => {
          moving = true;
        };
        const finish = () => {
          if (done) return;
          done = true;
          clearTimeout(deadline);
          removeEventListener('scroll', onScroll, true);
          removeEventListener('scrollend', finish, true);
          resolve({ x: window.scrollX, y: window.scrollY });
        };
        addEventListener('scroll', onScroll, true);
        addEventListener('scrollend', finish, true);
        const deadline = setTimeout(finish, limitMs);
        requestAnimationFrame(() =>
          requestAnimationFrame(() => {
            if (!moving) finish();
          }),
        );
      }),
  };

  Object.defineProperty(window, '__bridgeVision', { value: api, configurable: true, enumerable: false });
  return VERSION;
})();
