/**
 * The client's appearance set on /widget (GET /api/widget/config?client_id=…), applied at load.
 * The page's own options win: a field set in window.svcAIConfig is kept, and the appearance's
 * colours, font and radius sit below the page's --svc-custom-* properties (lib/widget/styles.ts).
 * The server validates every field; here they are checked again and set only as text or as one
 * whole custom property value (never markup, never a fragment of CSS).
 */
import type { WidgetAppearance } from '../chat/protocol';
import type { Config } from './client';

export type { WidgetAppearance };

/** The appearance of a client id, or null (no client id, unknown client, or the service unreachable). */
export async function fetchAppearance(origin: string, clientId: string | undefined): Promise<WidgetAppearance | null> {
  if (!clientId) return null;
  try {
    const r = await fetch(`${origin}/api/widget/config?client_id=${encodeURIComponent(clientId)}`);
    if (!r.ok) return null;
    const body = (await r.json()) as { appearance?: WidgetAppearance };
    return body.appearance && typeof body.appearance === 'object' ? body.appearance : null;
  } catch {
    return null;
  }
}

const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);

/** The widget's configuration: the page's options, then the appearance for what the page leaves unset. */
export function withAppearance(cfg: Config, a: WidgetAppearance): Config {
  const fromDashboard: Config = {
    botName: str(a.bot_name),
    headerChatName: str(a.header_name),
    headerIcon: str(a.header_icon_url)?.startsWith('https://') ? a.header_icon_url : undefined,
    handoffButtonText: str(a.handoff_button_text),
    defaultQuestions: Array.isArray(a.default_questions) ? a.default_questions.filter((q) => typeof q === 'string') : undefined,
  };
  if ((a.welcome_title || a.welcome_text) && !cfg.advancedWelcomeText && !cfg.welcomeMessage)
    fromDashboard.advancedWelcomeText = { title: str(a.welcome_title), description: str(a.welcome_text) };
  const merged: Config = { ...cfg };
  for (const [k, v] of Object.entries(fromDashboard) as Array<[keyof Config, never]>) if (merged[k] === undefined && v !== undefined) merged[k] = v;
  return merged;
}

/** The look: custom properties on the widget's host element, each one whole value the browser accepts. */
export function styleAppearance(host: HTMLElement, a: WidgetAppearance) {
  const set = (name: string, value: string | undefined, property: string) => {
    if (value && CSS.supports(property, value)) host.style.setProperty(name, value);
  };
  set('--svc-app-primary', str(a.primary_color), 'color');
  set('--svc-app-bg', str(a.background_color), 'color');
  set('--svc-app-font', str(a.font), 'font-family');
  const r = a.corner_radius;
  if (typeof r === 'number' && Number.isInteger(r) && r >= 0 && r <= 32) host.style.setProperty('--svc-app-radius', `${r}px`);
}
