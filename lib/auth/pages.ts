import type { Action } from './roles';

/**
 * Every dashboard page, once, in the navigation's order, with the role action that opens it. The
 * layout's navigation and the request metrics' route names read this list; proxy.ts's matcher
 * must be a literal for Next, so tests/unit/dashboard-pages.test.ts holds it equal to this list.
 */
export const DASHBOARD_PAGES: ReadonlyArray<{ path: string; label: string; action: Action }> = [
  { path: '/', label: 'Overview', action: 'records.read' },
  { path: '/inbox', label: 'Inbox', action: 'records.read' },
  { path: '/conversations', label: 'Conversations', action: 'records.read' },
  { path: '/responses', label: 'Responses', action: 'records.read' },
  { path: '/insights', label: 'Insights', action: 'records.read' },
  { path: '/knowledge', label: 'Knowledge base', action: 'knowledge.read' },
  { path: '/bot', label: 'Bot', action: 'bot.manage' },
  { path: '/widget', label: 'Widget', action: 'widget.manage' },
  { path: '/email', label: 'Email', action: 'email.manage' },
  { path: '/api-keys', label: 'API keys', action: 'api_keys.manage' },
  { path: '/webhooks', label: 'Webhooks', action: 'webhooks.manage' },
  { path: '/team', label: 'Team', action: 'team.manage' },
  { path: '/audit', label: 'Audit log', action: 'audit.read' },
  { path: '/privacy', label: 'Privacy', action: 'privacy.manage' },
  { path: '/profile', label: 'Profile', action: 'records.read' },
];
