'use client';
import { usePathname } from 'next/navigation';

/** The links the signed-in member's role may open (the layout filters them with lib/auth/roles). */
export function Nav({ links }: { links: ReadonlyArray<readonly [string, string]> }) {
  const path = usePathname();
  return (
    <nav className="nav" aria-label="Main">
      {links.map(([href, label]) => {
        const current = href === '/' ? path === '/' : path.startsWith(href);
        return (
          <a key={href} href={href} aria-current={current ? 'page' : undefined}>
            {label}
          </a>
        );
      })}
    </nav>
  );
}
