'use client';
import { useEffect, useState } from 'react';
import type { SuggestedReply as Suggestion } from '@/lib/dashboard/suggested-reply';
import { act, inboxSocket } from './useInboxSocket';
import styles from '../inbox.module.css';

const KIND_LABEL: Record<Suggestion['kind'], string> = {
  curated: 'From a curated answer',
  model: 'Drafted by your model from these sources',
  passages: 'From your knowledge base',
  none: '',
};

/**
 * A draft for the visitor's last message (docs/decisions/inbox.md "Suggested reply"), asked again
 * when a newer visitor message arrives. Only the member sees it; "Use suggestion" fills the Reply
 * box and nothing is sent until they press Send.
 */
export function SuggestedReply({
  conversationId,
  lastVisitorMessage,
  onUse,
}: {
  conversationId: string;
  lastVisitorMessage: string | null;
  onUse: (draft: string) => void;
}) {
  const [shown, setShown] = useState<{ for: string; suggestion: Suggestion | null; error?: string } | null>(null);
  useEffect(() => {
    if (!lastVisitorMessage) return;
    let live = true;
    const socket = inboxSocket();
    const ask = () =>
      void act<Suggestion>(socket, 'conversation:suggest', { conversation_id: conversationId }).then((r) => {
        if (live) setShown(r.ok ? { for: lastVisitorMessage, suggestion: r } : { for: lastVisitorMessage, suggestion: null, error: r.error.message });
      });
    if (socket.connected) ask();
    else socket.once('connect', ask);
    return () => {
      live = false;
      socket.off('connect', ask);
    };
  }, [conversationId, lastVisitorMessage]);

  const current = shown && shown.for === lastVisitorMessage ? shown : null;
  const s = current?.suggestion;
  return (
    <section className={`panel ${styles.suggestion}`} aria-labelledby="suggested-reply">
      <h2 id="suggested-reply" className={styles.panelTitle}>
        Suggested reply
      </h2>
      {!lastVisitorMessage ? (
        <p className="muted">No visitor message to answer yet.</p>
      ) : !current ? (
        <p className="muted">Looking in the knowledge base…</p>
      ) : !s ? (
        <p className="muted">No suggestion: {current.error}</p>
      ) : s.kind === 'none' || !s.draft ? (
        <p className="muted">Nothing relevant in the knowledge base for the visitor's last message.</p>
      ) : (
        <>
          <p className={styles.suggestionMeta}>{KIND_LABEL[s.kind]} · only you see this until you send it</p>
          <p className={`${styles.text} ${styles.draft}`}>{s.draft}</p>
          <p className={styles.suggestionMeta}>Sources: {s.sources.map((src) => src.title).join(', ')}</p>
          <button type="button" className="btn secondary" onClick={() => onUse(s.draft!)}>
            Use suggestion
          </button>
        </>
      )}
    </section>
  );
}
