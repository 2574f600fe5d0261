// @ts-check
// How bridge calls an element function of an installed script (bridge/cdp/page_script.py,
// PageScript.call_on): Runtime.callFunctionOn with `this` = the element, so it runs in the
// element's own frame. The script's global, the version wanted and the function come as
// arguments, never as code; a frame without that version answers the sentinel, and bridge
// installs the script there and calls again.
(
/**
 * @this {Element}
 * @param {string} name
 * @param {string} version
 * @param {string} fn
 * @param {...unknown} args
 */
function (name, version, fn, ...args) {
  const script = /** @type {Record<string, any>} */ (window)[name];
  return script && script.version === version ? script[fn](this, ...args) : '__bridge_script_missing__';
}
);
