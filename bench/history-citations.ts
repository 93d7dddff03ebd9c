// A figure in a document that is not in a generated section (bench/history-report.ts) names the
// recorded run it comes from, as a Markdown link to bench/history.ndjson, so that a reader can
// find it and test/docs/bench-report.test.ts can check it:
//   - a run:    [run 61963a6, 2026-11-27 16:35Z](../bench/history.ndjson): a recorded run, by the
//               start of its commit and the minute it started;
//               [run of 2026-11-24 02:08Z, transcribed](...): a transcribed run that has a time;
//               [runs "lean pipeline: after", transcribed](...): transcribed runs by their label;
//   - a figure: [93.8 %](../bench/history.ndjson "run 61963a6, 2026-11-27 16:35Z: Tracing: traced / untraced lifecycle"):
//               the value as the document shows it, and in the link's title the run (as above,
//               without "run") and the figure's name in the history. The value must equal the
//               recorded one, rounded to the decimals shown, in the recorded unit. A run named by
//               its label goes in a title in single quotes: 'runs "lean pipeline: after", transcribed: ...'.
import { figureKey, isRecorded, runMinute, type HistoryRun } from './history-report';

export interface Citation {
  /** As written, for messages. */
  text: string;
  /** The run, as written after "run " / "runs ". */
  run: string;
  /** For a figure: its name in the history, and the value as shown. */
  figure?: { name: string; shown: string };
}

// The title may be in single quotes, for a run named by its label (which is in double quotes).
const LINK = /\[([^\]]+)\]\(((?:\.\.\/|\.\/)*(?:[\w.-]+\/)*bench\/history\.ndjson)(?:\s+(?:"([^"]+)"|'([^']+)'))?\)/g;

/** Every citation of bench/history.ndjson in a Markdown text (code excluded). */
export function citationsIn(markdown: string): Citation[] {
  // Code shows the syntax; only what renders as a link is a citation.
  const prose = markdown
    .replace(/```[\s\S]*?```/g, '')
    .replace(/\n[ \t]*/g, ' ')
    .replace(/`[^`]*`/g, '');
  const found: Citation[] = [];
  for (const m of prose.matchAll(LINK)) {
    const [text, label] = m;
    const title = m[3] ?? m[4];
    if (title === undefined) {
      found.push({ text, run: label.replace(/^runs? /i, '') });
      continue;
    }
    // The figure's name follows the run's minute ("...Z: name") or its "transcribed" mark.
    const split = /^(.*?(?:\d\dZ|transcribed)): (.+)$/.exec(title);
    const run = (split?.[1] ?? title).replace(/^runs? /i, '');
    found.push({ text, run, figure: { name: split?.[2] ?? '', shown: label } });
  }
  return found;
}

/** The runs a citation's run names; none when it names no run of the history. */
export function runsNamed(run: string, history: HistoryRun[]): HistoryRun[] {
  const recorded = /^([0-9a-f]{7,40}), (\d{4}-\d\d-\d\d \d\d:\d\dZ)$/.exec(run);
  if (recorded)
    return history.filter(
      (r) => isRecorded(r) && r.commit?.startsWith(recorded[1]) && r.time && runMinute(r.time) === recorded[2],
    );
  const timed = /^of (\d{4}-\d\d-\d\d \d\d:\d\dZ), transcribed$/.exec(run);
  if (timed) return history.filter((r) => !isRecorded(r) && r.time && runMinute(r.time) === timed[1]);
  const labelled = /^"([^"]+)", transcribed$/.exec(run);
  if (labelled) return history.filter((r) => !isRecorded(r) && r.label === labelled[1]);
  return [];
}

/** Whether `shown` ("93.8 %", "2,930 req/s", "3") is the figure's value as recorded, to the decimals shown. */
export function showsValue(shown: string, figure: { value: number | null; unit: string }): boolean {
  const m = /^([+-]?[\d,]*\.?\d+)\s*(.*)$/.exec(shown.trim());
  if (!m || figure.value === null) return false;
  const number = Number(m[1].replace(/,/g, ''));
  const decimals = m[1].split('.')[1]?.length ?? 0;
  const unitMatches = m[2] === '' || m[2] === figure.unit;
  return unitMatches && Number(figure.value.toFixed(decimals)) === number;
}

/** What is wrong with each citation of `markdown`: a run the history lacks, or a figure it does not hold. */
export function citationProblems(markdown: string, history: HistoryRun[]): string[] {
  return citationsIn(markdown).flatMap((citation) => {
    const runs = runsNamed(citation.run, history);
    if (runs.length === 0) return [`${citation.text}: no run "${citation.run}" in bench/history.ndjson`];
    if (!citation.figure) return [];
    const { name, shown } = citation.figure;
    const figures = runs.flatMap((run) =>
      Object.entries(run.figures)
        .filter(([recorded]) => recorded === name || figureKey(recorded) === name)
        .map(([, figure]) => figure),
    );
    if (figures.length === 0) return [`${citation.text}: run "${citation.run}" has no figure "${name}"`];
    if (!figures.some((figure) => showsValue(shown, figure)))
      return [
        `${citation.text}: "${shown}" is not what run "${citation.run}" recorded for "${name}" (${figures.map((f) => `${f.value} ${f.unit}`).join(', ')})`,
      ];
    return [];
  });
}
