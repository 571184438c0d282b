/** Widget 2.0 styles: adopted into the shadow root (constructable sheet, so a strict CSP allows it). */
export const WIDGET_CSS = `
/* The page's --svc-custom-* and svcAIConfig colour win over the client's appearance (--svc-app-*, lib/widget/appearance.ts). */
:host { all: initial; --p: var(--svc-custom-primary-color, var(--svc-legacy-primary, var(--svc-app-primary, #3b5bdb)));
  --bg: var(--svc-custom-background-color, var(--svc-app-bg, #ffffff));
  --ff: var(--svc-custom-font-family, var(--svc-app-font, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif));
  --r: var(--svc-custom-border-radius, var(--svc-app-radius, 14px));
  font-family: var(--ff); color: #1c2233; }
* { box-sizing: border-box; font-family: inherit; }
:host([hidden]) { display: none !important; }
.launcher { position: fixed; bottom: 20px; right: 20px; z-index: 2147483000; width: 60px; height: 60px; border-radius: 50%; border: 0;
  background: var(--p); color: #fff; cursor: pointer; box-shadow: 0 6px 20px rgba(0,0,0,.25); display: grid; place-items: center; }
:host([data-position=left]) .launcher, :host([data-position=left]) .panel { right: auto; left: 20px; }
.launcher svg { width: 28px; height: 28px; fill: currentColor; }
.panel { position: fixed; bottom: 92px; right: 20px; z-index: 2147483001; width: 380px; max-width: calc(100vw - 40px); height: min(620px, calc(100vh - 120px));
  background: var(--bg); border-radius: var(--r); box-shadow: 0 12px 40px rgba(0,0,0,.28); display: flex; flex-direction: column; overflow: hidden;
  transition: opacity .18s ease, transform .18s ease; }
.panel[hidden] { display: none; }
header { background: var(--p); color: #fff; padding: 12px 14px; display: flex; align-items: center; gap: 10px; }
header img { width: 32px; height: 32px; border-radius: 50%; object-fit: cover; background: #fff; }
header .title { font-weight: 700; font-size: 16px; flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
header .status { font-size: 12px; opacity: .9; display: block; font-weight: 400; }
.icon-btn { background: transparent; border: 0; color: inherit; cursor: pointer; width: 36px; height: 36px; border-radius: 8px; display: grid; place-items: center; font-size: 20px; }
.icon-btn:hover { background: rgba(255,255,255,.18); }
.log { flex: 1; overflow-y: auto; padding: 14px; display: flex; flex-direction: column; gap: 10px; overscroll-behavior: contain; }
.welcome { text-align: center; padding: 8px 6px 4px; color: #4a5368; }
.welcome .wicon { font-size: 32px; }
.welcome img.wicon { width: 48px; height: 48px; border-radius: 50%; }
.welcome h2 { font-size: 17px; margin: 6px 0 4px; color: #1c2233; }
.welcome p { margin: 0; font-size: 14px; }
.suggestions { display: flex; flex-wrap: wrap; gap: 8px; justify-content: center; margin-top: 10px; }
.suggestions button { border: 1px solid var(--p); color: var(--p); background: #fff; border-radius: 999px; padding: 6px 12px; cursor: pointer; font-size: 13px; }
.msg { max-width: 86%; padding: 9px 12px; border-radius: 12px; font-size: 14px; line-height: 1.45; overflow-wrap: anywhere; }
.msg.user { align-self: flex-end; background: var(--p); color: #fff; border-bottom-right-radius: 4px; white-space: pre-wrap; }
.msg.bot { align-self: flex-start; background: #f1f3f8; color: #1c2233; border-bottom-left-radius: 4px; }
.msg.bot p, .msg.bot ul, .msg.bot ol, .msg.bot blockquote, .msg.bot pre { margin: 0 0 .5em; }
.msg.bot :last-child { margin-bottom: 0; }
.msg.bot blockquote { border-left: 3px solid #c3c9d9; padding-left: 8px; color: #3d4559; }
.msg.bot pre { background: #e4e7ef; padding: 8px; border-radius: 6px; overflow-x: auto; }
.msg.bot a { color: var(--p); }
.msg.bot .md-table { overflow-x: auto; margin: 0 0 .5em; }
.msg.bot table { border-collapse: collapse; font-size: 13px; }
.msg.bot th, .msg.bot td { border: 1px solid #c3c9d9; padding: 3px 6px; text-align: left; }
.msg.bot hr { border: 0; border-top: 1px solid #c3c9d9; }
.msg.error { background: #fff5f5; color: #c92a2a; border: 1px solid #ffc9c9; }
.sources { font-size: 12px; color: #5d6679; margin-top: 6px; }
.feedback { display: flex; gap: 6px; margin-top: 6px; }
.feedback button { border: 1px solid #c9cedc; background: #fff; border-radius: 8px; padding: 2px 8px; cursor: pointer; font-size: 12px; color: #1c2233; }
.feedback button[aria-pressed=true] { background: var(--p); color: #fff; border-color: var(--p); }
.attach { font-size: 12px; opacity: .9; margin-top: 4px; }
form { border-top: 1px solid #e3e6ef; padding: 10px; display: flex; gap: 8px; align-items: flex-end; background: var(--bg); }
textarea { flex: 1; resize: none; border: 1px solid #c9cedc; border-radius: 10px; padding: 9px 10px; font-size: 14px; max-height: 120px; min-height: 40px; color: #1c2233; background: #fff; }
.send { background: var(--p); color: #fff; border: 0; border-radius: 10px; padding: 0 14px; height: 40px; cursor: pointer; font-weight: 600; }
.send:disabled { opacity: .55; cursor: default; }
.file { position: relative; }
.file input { position: absolute; inset: 0; opacity: 0; width: 100%; cursor: pointer; }
.file span { display: grid; place-items: center; width: 40px; height: 40px; border: 1px solid #c9cedc; border-radius: 10px; color: #4a5368; font-size: 18px; pointer-events: none; }
.file input:focus-visible + span { outline: 3px solid #91a7ff; }
.chips { display: flex; flex-wrap: wrap; gap: 6px; padding: 0 10px; }
.chip { font-size: 12px; background: #eef1f8; border-radius: 999px; padding: 3px 8px; display: inline-flex; gap: 6px; align-items: center; }
.chip button { border: 0; background: none; cursor: pointer; font-size: 14px; line-height: 1; color: #5d6679; }
.notice { font-size: 12px; color: #c92a2a; padding: 4px 12px 0; }
.conn { font-size: 12px; text-align: center; color: #8a5a00; background: #fff4e6; padding: 4px; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
button:focus-visible, textarea:focus-visible, a:focus-visible { outline: 3px solid #91a7ff; outline-offset: 2px; }
.typing { color: #5d6679; font-style: italic; }
@media (max-width: 480px) {
  .panel { inset: 0; width: 100vw; max-width: 100vw; height: var(--svc-vh, 100dvh); bottom: 0; right: 0; border-radius: 0; }
  :host([data-position=left]) .panel { left: 0; }
}
@media (prefers-reduced-motion: reduce) { .panel { transition: none; } }
`;
