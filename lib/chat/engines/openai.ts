import { EngineError, retrieve, type Answer, type AnswerInput } from '../engine';

type Config = { baseUrl: string; apiKey?: string; model: string; timeoutMs: number };

/**
 * An OpenAI-compatible chat-completions endpoint, streamed (server-sent events). The retrieved
 * passages go in as context; a failure or timeout becomes an EngineError the visitor sees.
 */
export async function openAiCompatibleAnswer(input: AnswerInput, cfg: Config): Promise<Answer> {
  const sources = await retrieve(input);
  const context = sources.map((s, i) => `[${i + 1}] ${s.filename}:\n${s.passage}`).join('\n\n');
  const timeout = AbortSignal.timeout(cfg.timeoutMs);
  const signal = AbortSignal.any([timeout, input.signal]);
  let res: Response;
  try {
    res = await fetch(`${cfg.baseUrl.replace(/\/$/, '')}/chat/completions`, {
      method: 'POST',
      signal,
      headers: { 'content-type': 'application/json', ...(cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {}) },
      body: JSON.stringify({
        model: cfg.model,
        stream: true,
        messages: [
          { role: 'system', content: 'You are a support assistant. Answer only from the context below; say so when it does not contain the answer.\n\nContext:\n' + (context || '(no matching documents)') },
          { role: 'user', content: input.question },
        ],
      }),
    });
  } catch (e) {
    throw new EngineError(timeout.aborted ? 'The AI model did not answer in time.' : `The AI model could not be reached (${(e as Error).message}).`);
  }
  if (!res.ok || !res.body) {
    throw new EngineError(`The AI model failed (HTTP ${res.status}).`);
  }
  return { sources, deltas: readDeltas(res.body, timeout) };
}

async function* readDeltas(body: ReadableStream<Uint8Array>, timeout: AbortSignal): AsyncIterable<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') return;
        let parsed: { choices?: Array<{ delta?: { content?: string } }>; error?: { message?: string } };
        try { parsed = JSON.parse(data); } catch { throw new EngineError('The AI model sent a malformed stream.'); }
        if (parsed.error) throw new EngineError(`The AI model failed: ${parsed.error.message ?? 'unknown error'}.`);
        const text = parsed.choices?.[0]?.delta?.content;
        if (text) yield text;
      }
    }
  } catch (e) {
    if (e instanceof EngineError) throw e;
    throw new EngineError(timeout.aborted ? 'The AI model did not finish in time.' : 'The AI model stream broke off.');
  }
}
