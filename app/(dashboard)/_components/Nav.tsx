'use client';
import { usePathname } from 'next/navigation';

const LINKS = [
  ['/', 'Overview'], ['/conversations', 'Conversations'], ['/responses', 'Responses'],
  ['/knowledge', 'Knowledge base'], ['/bot', 'Bot'], ['/widget', 'Widget'], ['/api-keys', 'API keys'], ['/webhooks', 'Webhooks'],
] as const;

export function Nav() {
  const path = usePathname();
  return (
    <nav className="nav" aria-label="Main">
      {LINKS.map(([href, label]) => {
        const current = href === '/' ? path === '/' : path.startsWith(href);
        return <a key={href} href={href} aria-current={current ? 'page' : undefined}>{label}</a>;
      })}
    </nav>
  );
}
