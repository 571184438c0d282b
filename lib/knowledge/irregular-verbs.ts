/**
 * Irregular English verbs (base, past, participle): the stemmer joins only regular endings, so
 * "lose" never met "lost" (docs/decisions/model-per-account.md "Irregular verbs", also what is left out).
 */
import type { Db } from '../../db/client';
import { stemWords } from '../../db/queries/knowledge-words';
import { processSlot } from '../core/process';
import { FILLER, type WeightedTerms } from './ranking';

const stemsSlot = processSlot<Promise<string[][][]>>('svc.knowledge.irregularVerbStems');

const VERBS = `arise arose arisen|awake awoke awoken|bear bore borne|beat beat beaten|become became become|begin began begun
|bend bent bent|bleed bled bled|blow blew blown|break broke broken|breed bred bred
|bring brought brought|build built built|burn burnt burnt|buy bought bought|catch caught caught|choose chose chosen
|cling clung clung|come came come|creep crept crept|deal dealt dealt|dig dug dug|draw drew drawn|dream dreamt dreamt
|drink drank drunk|drive drove driven|eat ate eaten|fall fell fallen|feed fed fed|fight fought fought
|find found found|flee fled fled|fly flew flown|forbid forbade forbidden|forget forgot forgotten
|forgive forgave forgiven|freeze froze frozen|get got gotten|give gave given|go went gone
|grow grew grown|hang hung hung|hear heard heard|hide hid hidden|hold held held|keep kept kept|kneel knelt knelt
|know knew known|lay laid laid|lead led led|lean leant leant|leap leapt leapt|learn learnt learnt
|lend lent lent|lose lost lost|make made made|mean meant meant|meet met met
|mislay mislaid mislaid|mistake mistook mistaken|overpay overpaid overpaid|pay paid paid|prove proved proven
|rebuild rebuilt rebuilt|redo redid redone|repay repaid repaid|resend resent resent|ride rode ridden|ring rang rung
|rise rose risen|run ran run|say said said|seek sought sought|sell sold sold|send sent sent|sew sewed sewn
|shake shook shaken|shine shone shone|shoot shot shot|show showed shown|shrink shrank shrunk|sing sang sung
|sink sank sunk|sit sat sat|sleep slept slept|slide slid slid|speak spoke spoken|spend spent spent|spill spilt spilt
|spoil spoilt spoilt|stand stood stood|steal stole stolen|stick stuck stuck|sting stung stung|strike struck struck
|swear swore sworn|sweep swept swept|swim swam swum|swing swung swung|take took taken|teach taught taught|tear tore torn
|tell told told|think thought thought|throw threw thrown|understand understood understood|undo undid undone
|wake woke woken|wear wore worn|weave wove woven|weep wept wept|win won won|withdraw withdrew withdrawn
|write wrote written`;

/** Each verb's distinct forms. */
export const IRREGULAR_VERBS: readonly (readonly string[])[] = VERBS.split('|').map((line) => [...new Set(line.trim().split(' '))]);

/** Each verb group's stems, and which groups every stem is in (built once per list of groups). */
const indexes = new WeakMap<string[][][], { stems: string[][]; groupsOf: Map<string, number[]> }>();

function indexOf(verbs: string[][][]) {
  let index = indexes.get(verbs);
  if (!index) {
    const stems = verbs.map((group) => group.flat());
    const groupsOf = new Map<string, number[]>();
    stems.forEach((group, g) => {
      for (const s of group) {
        const list = groupsOf.get(s) ?? [];
        if (list.at(-1) !== g) list.push(g);
        groupsOf.set(s, list);
      }
    });
    index = { stems, groupsOf };
    indexes.set(verbs, index);
  }
  return index;
}

/** For each verb the question uses, its other forms' stems, each mapped to the question's stem ("lost" → "lose"). */
export function otherForms(terms: WeightedTerms, verbs: string[][][]): Map<string, string> {
  const out = new Map<string, string>();
  if (verbs.length === 0) return out;
  const { stems, groupsOf } = indexOf(verbs);
  // The groups the question's words are in, in the list's order (a later group's mapping wins, as in a scan).
  const touched = [...new Set([...terms.keys()].flatMap((t) => groupsOf.get(t) ?? []))].sort((a, b) => a - b);
  for (const g of touched) {
    const group = stems[g]!;
    const asked = group.find((s) => terms.has(s))!;
    for (const s of group) if (!terms.has(s)) out.set(s, asked);
  }
  return out;
}

/**
 * The verbs as stem groups (as synonym groups are: group, word, stems), stemmed once per process by
 * the database's english configuration (the one the passages were stemmed with). A verb whose forms
 * share one stem, or whose forms the configuration drops as stop words, joins nothing and is left out.
 */
export function irregularVerbStems(db: Db): Promise<string[][][]> {
  const cached = stemsSlot.get();
  if (cached) return cached;
  const words = IRREGULAR_VERBS.flat();
  const made = stemWords(db, words).then((stems) => {
    const byWord = new Map(words.map((w, i) => [w, stems[i]!]));
    // A form whose stem is question phrasing ("get", "know", "make") would bring that word back as evidence.
    const kept = (f: string) => byWord.get(f)!.filter((s) => !FILLER.has(s));
    return IRREGULAR_VERBS.map((forms) => forms.map(kept).filter((s) => s.length > 0)).filter((group) => new Set(group.map((s) => s.join(' '))).size > 1);
  });
  // A failed read (the database away) is tried again by the next question, not kept.
  made.catch(() => stemsSlot.clear());
  stemsSlot.set(made);
  return made;
}
