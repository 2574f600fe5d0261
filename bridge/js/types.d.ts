// Declarations for the type check of the in-page scripts (tsc, tests/cdp/test_js_types.py):
// what the scripts find in the page that the DOM library does not declare. Not shipped, never
// run: the scripts themselves are plain JavaScript.

/** What bridge.providers.pack.Pack.page_data gives page.js for one provider. */
interface PackData {
  provider: string;
  fingerprint: string;
  selectors: Record<string, string[]>;
  texts: Record<string, string[]>;
  regex: Record<string, [string, string]>;
  urls: {
    conversation_path: [string, string];
    login_path: [string, string] | null;
    login_hosts: string[];
  };
  flow: {
    extraction_steps: string[];
    script_input: string;
    login_requires_no_composer: boolean;
    rate_limit_in_reply: boolean;
    reply_notice_max_chars: number;
  };
}

/** The packs, by provider: bridge/providers/ask_script.py writes them in for this name. */
declare const __BRIDGE_PACKS__: Record<string, PackData>;

/** What every installed script answers to: its version (bridge/cdp/page_script.py). */
interface InstalledScript {
  version: string;
}

interface Window {
  __bridgePage?: InstalledScript;
  __bridgeDom?: InstalledScript;
  __bridgeActions?: InstalledScript;
  __bridgeVision?: InstalledScript;
}
