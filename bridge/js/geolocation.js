// @ts-check
// The devtools group's read of the page's geolocation permission (bridge/tools/operations/
// devtools.py: browser_emulate says whether the emulated position reaches the page). Called
// with Runtime.callFunctionOn in an isolated world of the page's main frame: the page's own
// scripts cannot replace navigator.permissions there, so a hostile page cannot make the
// agent believe it was allowed (or not) to read the location.
(
/**
 * @returns {Promise<string>} 'granted', 'prompt' or 'denied'; 'unknown' where the page has
 *   no Permissions API (about:blank, an old engine)
 */
async function () {
  try {
    const status = await navigator.permissions.query({ name: 'geolocation' });
    return status.state;
  } catch {
    return 'unknown';
  }
}
)
