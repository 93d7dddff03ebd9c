// Enough YAML for the Temporal server's configuration file: nested maps, lists, strings,
// numbers and booleans. Strings are always double-quoted (JSON escaping is valid YAML), so no
// value is ever read back as another type. Ours rather than a dependency: a dozen lines.
type Value = string | number | boolean | Value[] | { [key: string]: Value } | undefined;

export function toYaml(value: Record<string, unknown>, indent = ''): string {
  return Object.entries(value)
    .filter(([, v]) => v !== undefined)
    .map(([key, v]) => entry(`${indent}${key}:`, v as Value, indent))
    .join('');
}

function entry(prefix: string, value: Value, indent: string): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return `${prefix} []\n`;
    return `${prefix}\n${value.map((item) => listItem(item, `${indent}  `)).join('')}`;
  }
  if (value !== null && typeof value === 'object') {
    if (Object.keys(value).length === 0) return `${prefix} {}\n`;
    return `${prefix}\n${toYaml(value, `${indent}  `)}`;
  }
  return `${prefix} ${scalar(value)}\n`;
}

function listItem(item: Value, indent: string): string {
  if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
    // The first key goes on the dash's line, the others line up under it.
    const body = toYaml(item, `${indent}  `);
    return `${indent}- ${body.slice(indent.length + 2)}`;
  }
  if (Array.isArray(item)) throw new Error('lists of lists are not supported');
  return `${indent}- ${scalar(item)}\n`;
}

function scalar(value: Value): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`not a YAML number: ${value}`);
    return String(value);
  }
  if (typeof value === 'boolean') return String(value);
  throw new Error(`unsupported YAML value: ${String(value)}`);
}
