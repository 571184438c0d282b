/**
 * svc widget loader (public/chatbot/loader.js): reads data-track or data-version from its own
 * script tag, fetches the manifest and injects the bundle with its SRI integrity. No
 * dependencies, a double-load guard, and a call queue for svcAIConfig.show()/hide().
 */
(() => {
  const w = window as unknown as {
    svcAI?: { loader?: boolean; legacy?: boolean; q?: string[] };
    svcAIConfig?: { show?: () => void; hide?: () => void };
  };
  const fail = (m: string) => console.error(`svc widget: ${m}`);
  const script = document.currentScript as HTMLScriptElement | null;
  if (!script) return fail('load loader.js with a plain <script src> tag');
  const ai = (w.svcAI = w.svcAI || {});
  if (ai.legacy)
    return fail(
      'the 1.0 widget (/chat/v0/widget.js) is already on this page; mixing 1.0 and 2.0 is not supported, so 2.0 (/chatbot/loader.js) will not start. Remove the old script tag.',
    );
  if (ai.loader) return;
  ai.loader = true;

  const track = script.getAttribute('data-track');
  const version = script.getAttribute('data-version');
  if (track && version) return fail('use data-track or data-version on the loader script, never both');
  if (!track && !version) return fail('the loader script needs data-track (stable, beta or lts) or data-version (such as 2.0 or 2.0.5)');
  if (track && !/^(stable|beta|lts)$/.test(track)) return fail(`unknown data-track "${track}" (use stable, beta or lts)`);
  if (version && !/^\d+\.\d+(\.\d+)?$/.test(version)) return fail(`data-version "${version}" is not a version such as 2.0 or 2.0.5`);

  const cfg = (w.svcAIConfig = w.svcAIConfig || {});
  const q = (ai.q = ai.q || []);
  if (!cfg.show)
    cfg.show = () => {
      q.push('show');
    };
  if (!cfg.hide)
    cfg.hide = () => {
      q.push('hide');
    };

  const origin = new URL(script.src).origin;
  const what = track ? `data-track "${track}"` : `data-version "${version}"`;
  fetch(`${origin}/chatbot/manifests/${track ? `tracks/${track}` : `versions/${version}`}/manifest.json`)
    .then((r) => (r.ok ? r.json() : Promise.reject(new Error(r.status === 404 ? `no release matches ${what}` : `manifest for ${what}: HTTP ${r.status}`))))
    .then((m: { url: string; integrity: string }) => {
      const s = document.createElement('script');
      s.src = new URL(m.url, origin).href;
      s.integrity = m.integrity;
      s.crossOrigin = 'anonymous';
      s.async = true;
      s.setAttribute('data-svc-origin', origin);
      s.onerror = () => fail(`the widget bundle for ${what} could not be loaded`);
      document.head.appendChild(s);
    })
    .catch((e: Error) => fail(e.message));
})();
