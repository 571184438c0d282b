/** What answers visitors, in plain words (no operator settings named on a customer page). */
export function EngineSummary({ engine }: { engine: 'own model' | 'model' | 'built-in' }) {
  return (
    <div className="muted" data-testid="engine-summary">
      <p>
        How the bot answers visitors from the <a href="/knowledge">knowledge base</a>. It first looks for the passages that match the question; when none
        matches well enough, it answers with your &ldquo;No answer&rdquo; text instead of guessing.
      </p>
      {engine === 'own model' && <p>Answers are then written by your own model (section &ldquo;Your model&rdquo;), following your instructions.</p>}
      {engine === 'model' && <p>Answers are then written by the service&apos;s model, following your instructions. You can connect your own model below.</p>}
      {engine === 'built-in' && (
        <p>
          No model is connected, so the built-in engine answers: it quotes the best-matching passage word for word, with its document&apos;s title (and a second
          one when it matches almost as well). It does not write sentences of its own, so the Instructions and Model settings take effect once you connect a
          model in &ldquo;Your model&rdquo; below.
        </p>
      )}
    </div>
  );
}
