import fs from 'node:fs';
import path from 'node:path';
import { getDb, type Db } from '../../db/client';
import {
  deleteDocument,
  findCurrentDocumentNamed,
  getDocument,
  insertDocumentWithChunks,
  listDocuments,
  listPassages,
  matchPassages,
  restoreDocumentVersion,
  readQuestionWords,
  surfaceForms,
  type NewDocument,
} from '../../db/queries/knowledge';
import { requireAccount } from '../accounts/service';
import { AppError } from '../core/errors';
import { isUuid } from '../core/validation';
import bodyLimits from '../net/body-limits.json';
import { sniffType } from '../documents/sniff';
import { compoundsIn, namesCompound, type Compound } from './compounds';
import { extractText } from './extract';
import { documentTitle, splitIntoPassages } from './passages';
import { dropAbsentSynonyms, expandWithSynonyms } from './synonyms';
import { irregularVerbStems, otherForms } from './irregular-verbs';
import { cachedVocabulary, indexVocabulary, keepVocabulary, typoCorrections } from './typos';
import { FILLER, rankCandidates, sameWord, withoutConflations, writtenNames, type RankedPassage, type WeightedTerms } from './ranking';

export const KB_MAX_BYTES = bodyLimits.knowledgeDocumentBytes;

/** Type of a knowledge-base file: content first; HTML is allowed here (not in visitor uploads). */
export function knowledgeType(buf: Uint8Array, filename: string): string {
  const ext = filename.toLowerCase().split('.').pop();
  const sniffed = sniffType(buf, filename);
  if ('contentType' in sniffed && sniffed.kind === 'document') return sniffed.contentType;
  if ('rejected' in sniffed && /HTML/.test(sniffed.rejected) && (ext === 'html' || ext === 'htm')) return 'text/html';
  throw new AppError(
    'unsupported_media_type',
    `${filename}: ${'rejected' in sniffed ? sniffed.rejected : 'images'} — the knowledge base takes txt, md, html, pdf, docx and csv`,
  );
}

/** A file read into what the knowledge base stores: its type, title and passages (refused when unusable). */
export async function prepareKnowledgeDocument(filename: string, buf: Uint8Array, contentType?: string) {
  if (buf.length > KB_MAX_BYTES) throw new AppError('payload_too_large', `${filename} is larger than ${KB_MAX_BYTES} bytes.`);
  const type = contentType ?? knowledgeType(buf, filename);
  const text = await extractText(buf, type);
  const title = documentTitle(text, filename);
  const passages = splitIntoPassages(text, title);
  if (passages.length === 0) throw new AppError('invalid_request', `${filename} contains no text to answer from.`);
  return { contentType: type, text, title, passages };
}

type Prepared = Awaited<ReturnType<typeof prepareKnowledgeDocument>>;

/** Stores a prepared document (a new version when `doc.lineageId` is set) in one transaction. */
export async function storeKnowledgeDocument(db: Db, accountId: number, prepared: Prepared, doc: Omit<NewDocument, 'title' | 'contentType'>) {
  const row = await db.transaction((tx) =>
    insertDocumentWithChunks(tx as unknown as Db, accountId, { ...doc, title: prepared.title, contentType: prepared.contentType }, prepared.passages),
  );
  return { document_id: row.id, title: prepared.title, chunks: row.chunks };
}

export async function addKnowledgeDocument(
  accountId: number,
  filename: string,
  buf: Uint8Array,
  scope: { conversationId?: string; attachmentId?: string; db?: Db } = {},
) {
  const prepared = await prepareKnowledgeDocument(filename, buf);
  const db = scope.db ?? (await getDb());
  if (!scope.db) await requireAccount(db, accountId);
  return storeKnowledgeDocument(db, accountId, prepared, {
    filename,
    size: buf.length,
    conversationId: scope.conversationId,
    attachmentId: scope.attachmentId,
  });
}

/**
 * An upload from the dashboard (docs/contracts.md §16): a document whose title or file name the
 * account already has is not stored but reported as `existing` (the page offers "Replace"); with
 * `replace` (that document's id) it becomes the new version, so there are never two copies.
 */
export async function uploadKnowledgeDocument(accountId: number, filename: string, buf: Uint8Array, replace: string | null) {
  const prepared = await prepareKnowledgeDocument(filename, buf);
  const db = await getDb();
  await requireAccount(db, accountId);
  let lineageId: string | undefined;
  if (replace) {
    const old = isUuid(replace) ? await getDocument(db, accountId, replace) : null;
    if (!old || old.supersededAt) throw new AppError('not_found', 'The document to replace is no longer there; upload again.');
    lineageId = old.lineageId;
  } else {
    const same = await findCurrentDocumentNamed(db, accountId, prepared.title, filename);
    if (same) return { existing: { document_id: same.id, title: same.title || same.filename, filename: same.filename } };
  }
  const stored = await storeKnowledgeDocument(db, accountId, prepared, { filename, size: buf.length, lineageId });
  return { stored: { ...stored, replaced: !!lineageId } };
}

/** Makes an earlier version of a document the one that answers. */
export async function restoreKnowledgeVersion(accountId: number, documentId: string) {
  if (!isUuid(documentId) || !(await restoreDocumentVersion(await getDb(), accountId, documentId)))
    throw new AppError('not_found', `No document ${documentId}.`);
  return { document_id: documentId, restored: true };
}

/** A document with its passages in reading order (null when the account has no such document). */
export async function readKnowledgeDocument(accountId: number, documentId: string) {
  if (!isUuid(documentId)) return null;
  const db = await getDb();
  const doc = await getDocument(db, accountId, documentId);
  return doc ? { ...doc, passages: await listPassages(db, accountId, documentId) } : null;
}

export async function addKnowledgeFile(accountId: number, filePath: string) {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(filePath);
  } catch (e) {
    throw new AppError('invalid_request', `Cannot read ${filePath}: ${(e as Error).message}`);
  }
  const { document_id, chunks } = await addKnowledgeDocument(accountId, path.basename(filePath), buf);
  return { document_id, chunks }; // docs/contracts.md §2: exactly these two
}

export async function listKnowledge(accountId: number) {
  return listDocuments(await getDb(), accountId);
}

/** The current documents, each with its earlier versions (newest first). */
export async function listKnowledgeWithVersions(accountId: number) {
  const db = await getDb();
  const [current, previous] = await Promise.all([listDocuments(db, accountId, 'current'), listDocuments(db, accountId, 'previous')]);
  return current.map((d) => ({ ...d, versions: previous.filter((p) => p.lineageId === d.lineageId) }));
}

export async function removeKnowledgeDocument(accountId: number, documentId: string) {
  if (!isUuid(documentId) || !(await deleteDocument(await getDb(), accountId, documentId))) throw new AppError('not_found', `No document ${documentId}.`);
  return { document_id: documentId, deleted: true };
}

/**
 * Whether a passage's other form of the question's irregular verb counts as that word ("lost" for
 * "lose"): never, always, or only when the ranking without them has no relevant best passage
 * (docs/decisions/model-per-account.md "Irregular verbs").
 */
export type VerbForms = { mode: 'never' } | { mode: 'always' } | { mode: 'retry'; relevant: (p: RankedPassage) => boolean };

/** Text to rank passages for: the question (weight 1) and, optionally, earlier turns (less). */
export type RetrievalQuery = Array<{ text: string; weight: number }>;

/** One ranking to make: the text to rank for, how many passages, and the irregular verbs' other forms. */
export type PassageSearch = { query: string | RetrievalQuery; limit?: number; verbForms?: VerbForms };

/**
 * The account's passages (plus the documents uploaded in this conversation) ranked for a question,
 * best first, each with its BM25 score and its relevance (0..1; the answer engines apply the floor).
 */
export async function findPassages(
  accountId: number,
  conversationId: string | null,
  query: string | RetrievalQuery,
  limit = 3,
  verbForms: VerbForms = { mode: 'never' },
): Promise<RankedPassage[]> {
  const [ranked] = await findPassagesForEach(accountId, conversationId, [{ query, limit, verbForms }]);
  return ranked!;
}

/**
 * findPassages for several rankings of one question at once (a follow-up is ranked with the
 * conversation and alone): their texts' words and the account's synonyms are read in one
 * statement and their passages in another, each ranking then made as if alone.
 */
export async function findPassagesForEach(accountId: number, conversationId: string | null, searches: PassageSearch[]): Promise<RankedPassage[][]> {
  const db = await getDb();
  const partsOf = searches.map((s) =>
    (typeof s.query === 'string' ? [{ text: s.query, weight: 1 }] : s.query).map((p) => ({ ...p, text: p.text.slice(0, 2000) })),
  );
  const texts = [...new Set(partsOf.flat().map((p) => p.text))];
  const withVerbs = searches.some((s) => (s.verbForms?.mode ?? 'never') !== 'never');
  const known = cachedVocabulary(accountId);
  const [words, verbs] = await Promise.all([readQuestionWords(db, accountId, texts, known?.key ?? null), withVerbs ? irregularVerbStems(db) : []]);
  const vocabulary = words.vocabulary ? keepVocabulary(accountId, { key: words.vocabularyKey, byInitial: indexVocabulary(words.vocabulary) }) : known!;
  const corrections = texts.map((_, i) => typoCorrections(words.lexemes[i]!, words.forms[i]!, vocabulary.byInitial));
  const prepared = searches.map((s, k) => {
    const terms: WeightedTerms = new Map();
    for (const part of partsOf[k]!) {
      const i = texts.indexOf(part.text);
      for (const stem of words.lexemes[i]!) {
        const lexeme = corrections[i]!.get(stem) ?? stem;
        if (FILLER.has(lexeme)) continue;
        terms.set(lexeme, Math.max(terms.get(lexeme) ?? 0, part.weight));
      }
    }
    if (terms.size === 0) return null;
    const used = expandWithSynonyms(terms, words.synonyms);
    const forms = otherForms(terms, s.verbForms?.mode === 'always' || s.verbForms?.mode === 'retry' ? verbs : []);
    return { terms, used, forms, wanted: [...terms.keys(), ...forms.keys()].slice(0, 200) };
  });
  const wanted = [...new Set(prepared.flatMap((p) => p?.wanted ?? []))];
  const corpus = await matchPassages(db, accountId, conversationId, wanted);
  return Promise.all(
    searches.map(async (s, k) => {
      const p = prepared[k];
      if (!p) return [];
      const { terms, used, forms } = p;
      const own = new Set(p.wanted);
      // The candidates and words this search alone would have read.
      const candidates = corpus.candidates
        .map((c) => (c.terms.every((t) => own.has(t.lexeme)) ? c : { ...c, terms: c.terms.filter((t) => own.has(t.lexeme)) }))
        .filter((c) => c.terms.length > 0);
      const mine = { ...corpus, candidates };
      if (used.length > 0) {
        const present = new Set(candidates.flatMap((c) => c.terms.map((t) => forms.get(t.lexeme) ?? t.lexeme)));
        dropAbsentSynonyms(terms, used, present);
      }
      const parts = partsOf[k]!;
      const question = parts.map((part) => part.text).join('\n');
      const asked = new Map<string, Set<string>>();
      for (const part of parts) {
        for (const [lexeme, written] of words.forms[texts.indexOf(part.text)]!) asked.set(lexeme, new Set([...(asked.get(lexeme) ?? []), ...written]));
      }
      // A corrected word written as a name ("Gmail", not "email") stays that name: the passage must contain it.
      const isTerm = (l: string) => terms.has(l) || parts.some((part) => corrections[texts.indexOf(part.text)]!.has(l));
      const names = questionNames(parts, (part) => words.forms[texts.indexOf(part.text)]!, isTerm);
      const limit = s.limit ?? 3;
      const verbForms = s.verbForms ?? { mode: 'never' };
      const rank = (f: ReadonlyMap<string, string>) => dropConflations(db, question, asked, withoutRepeats(rankCandidates(terms, mine, f, names), limit));
      if (verbForms.mode !== 'retry' || forms.size === 0) return rank(forms);
      // The candidates already include the forms' passages: the second ranking costs no second search.
      const first = await rank(new Map());
      if (first[0] && verbForms.relevant(first[0])) return first;
      const again = await rank(forms);
      return again[0] && verbForms.relevant(again[0]) ? again : first;
    }),
  );
}

/**
 * The names the question itself writes (ranking.ts writtenNames; not the earlier turns'), each as
 * the stems of its words that are among the terms (or corrected into one): a hyphenated name stands for its parts too
 * ("Two-Factor": "two", "factor"). Words with no stem of their own (stop words, phrasing) drop out.
 */
function questionNames(
  parts: RetrievalQuery,
  formsOf: (part: RetrievalQuery[number]) => Map<string, Set<string>>,
  isTerm: (lexeme: string) => boolean,
): string[][] {
  return parts
    .filter((part) => part.weight === 1)
    .flatMap((part) => {
      const written = [...formsOf(part)];
      const stems = (word: string) => {
        const pieces = new Set([word, ...word.split(/[-'’]/)]);
        return written.filter(([l, ws]) => isTerm(l) && [...ws].some((w) => pieces.has(w))).map(([l]) => l);
      };
      return writtenNames(part.text, (word) => stems(word).length > 0).map((name) => [...new Set(name.flatMap(stems))]);
    })
    .filter((name) => name.length > 0);
}

/** The ranking with each passage text once (the best-ranked copy), its first `limit`: an answer never quotes the same text twice. */
export function withoutRepeats(ranked: RankedPassage[], limit = Number.POSITIVE_INFINITY): RankedPassage[] {
  const seen = new Set<string>();
  const out: RankedPassage[] = [];
  for (const p of ranked) {
    if (out.length >= limit) break;
    const key = p.content.replace(/\s+/g, ' ').trim().toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(p);
  }
  return out;
}

/** How many passages' written forms a process keeps (each a few KB; LRU). */
const PASSAGE_FORMS_CACHED = 1000;
const passageFormsCache = new Map<string, Promise<Map<string, Set<string>>>>();

/**
 * The written forms of every word of each passage text. Stemming a text is the same every time,
 * and the same few passages answer most questions, so a process keeps the forms of the passages
 * it has seen, keyed by their text (a changed passage is another key; nothing goes stale): the
 * english parser's walk over each passage (`ts_debug`, ~2.7 ms for 600 characters) was most of
 * PostgreSQL's work per answer. Only unseen passages reach the database, once even when rankings
 * running side by side ask for them (the read in flight is shared).
 */
async function passageForms(db: Db, texts: string[]): Promise<Array<Map<string, Set<string>>>> {
  const missing = [...new Set(texts.filter((t) => !passageFormsCache.has(t)))];
  if (missing.length > 0) {
    const read = surfaceForms(db, missing, null);
    missing.forEach((t, k) => {
      const forms = read.then((found) => found[k]!);
      // A failed read (the database away) is tried again by the next question, not kept.
      forms.catch(() => passageFormsCache.get(t) === forms && passageFormsCache.delete(t));
      passageFormsCache.set(t, forms);
    });
  }
  const pending = texts.map((t) => {
    const forms = passageFormsCache.get(t)!;
    // Most recently used last: the first key is the one to evict.
    passageFormsCache.delete(t);
    passageFormsCache.set(t, forms);
    if (passageFormsCache.size > PASSAGE_FORMS_CACHED) passageFormsCache.delete(passageFormsCache.keys().next().value!);
    return forms;
  });
  return Promise.all(pending);
}

/**
 * The relevance of each ranked passage without the words it shares with the question only through
 * the stemmer (ranking.ts sameWord): the written forms of the question's words (`written`, read
 * with its stems) and the passage's (title, headings and text; from passageForms) are compared.
 */
async function dropConflations(db: Db, question: string, written: ReadonlyMap<string, Set<string>>, ranked: RankedPassage[]): Promise<RankedPassage[]> {
  if (ranked.length === 0) return ranked;
  const lexemes = new Set(ranked.flatMap((p) => p.evidence.map((e) => e.lexeme)));
  const asked = new Map([...written].filter(([l]) => lexemes.has(l)));
  const passages = await passageForms(
    db,
    ranked.map((p) => `${p.context}\n${p.content}`),
  );
  const compounds = compoundsIn(question);
  const headOf = (c: Compound) => [...asked.entries()].find(([, forms]) => forms.has(c.head))?.[0];
  return ranked.map((p, i) => {
    const text = `${p.context}\n${p.content}`;
    // A head word the question uses inside a compound the passage never names is not evidence
    // ("open a bank account" against "Closing your account").
    const outOfCompound = compounds
      .filter((c) => !namesCompound(text, c))
      .map(headOf)
      .filter((l): l is string => !!l);
    const conflated = new Set(
      p.evidence
        .map((e) => e.lexeme)
        .filter((l) => {
          if (outOfCompound.includes(l)) return true;
          const mine = [...(asked.get(l) ?? [])];
          const theirs = [...(passages[i]!.get(l) ?? [])];
          // A form we cannot see (e.g. inside a word ts_debug splits differently) is not held against the passage.
          if (mine.length === 0 || theirs.length === 0) return false;
          return !mine.some((a) => theirs.some((b) => sameWord(a, b)));
        }),
    );
    return withoutConflations(p, conflated);
  });
}
