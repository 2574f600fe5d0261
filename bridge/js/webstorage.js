// @ts-check
// The storage group's localStorage / sessionStorage operations (bridge/tools/operations/
// storage.py). Called with Runtime.callFunctionOn in an isolated world of the page's main
// frame: the page's own scripts cannot replace Storage's methods there, so a hostile page
// can neither hide an item from the agent nor see what the agent reads or writes. The
// operation and its values come as arguments, never as code.
(
/**
 * @param {string} area 'local' or 'session'
 * @param {string} op list, get, set, delete, clear or replace (clear, then set every item)
 * @param {string} key
 * @param {string} value
 * @param {{name: string, value: string}[]} items for replace
 * @returns {{name: string, value: string}[] | string | null}
 */
function (area, op, key, value, items) {
  const store = area === 'local' ? window.localStorage : window.sessionStorage;
  switch (op) {
    case 'list': {
      /** @type {{name: string, value: string}[]} */
      const out = [];
      for (let i = 0; i < store.length; i++) {
        const k = store.key(i);
        if (k !== null) out.push({ name: k, value: store.getItem(k) ?? '' });
      }
      return out;
    }
    case 'get':
      return store.getItem(key);
    case 'set':
      store.setItem(key, value);
      return null;
    case 'delete':
      store.removeItem(key);
      return null;
    case 'clear':
      store.clear();
      return null;
    case 'replace':
      store.clear();
      for (const item of items) store.setItem(item.name, item.value);
      return null;
    default:
      throw new Error('unknown storage operation ' + op);
  }
}
);
