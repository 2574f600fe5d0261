// The service worker answers the content script: a mark with its answer on the page proves
// this worker ran, not just the content script.
chrome.runtime.onMessage.addListener((message, _sender, reply) => {
  if (message && message.ping) reply({ from: "worker", id: chrome.runtime.id });
});
