/**
 * Summarises a V8 .cpuprofile: time by package (ours, oidc-provider, koa, ioredis, jose, node
 * internals...) and the top functions by self and by total time, per token when the number of
 * tokens served during the profile is known. Native frames (no script) count for the package of
 * their JS caller; in the "own+node" column, node's own JS counts for its caller's package too
 * (a socket write for koa, a command's parsing for ioredis). Run: node dist/bench/profile-summary.js <file.cpuprofile> [--top 15] [--tokens N]
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { formatTable } from './table.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const SPECIAL: Record<string, string> = {
  '(garbage collector)': '(gc)',
  '(program)': '(program)',
  '(idle)': '(idle)',
  '(root)': '(root)',
};
const IOREDIS_FAMILY = new Set(['ioredis', 'redis-parser', 'redis-errors', 'denque', 'cluster-key-slot', 'standard-as-callback']);
const OURS = /\/dist\/(src|adapters|policies)\//;
const HARNESS = /\/dist\/(bench|examples|devtools)\//;

function packageOfUrl(url: string): string {
  if (url.startsWith('node:')) return 'node internals';
  const path = url.replace(/^file:\/\//, '');
  const modules = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
  if (modules) {
    const name = modules[1]!;
    if (name === 'koa' || name.startsWith('koa-') || name.startsWith('@koa/')) return 'koa';
    return IOREDIS_FAMILY.has(name) ? 'ioredis' : name;
  }
  if (OURS.test(path)) return 'ours';
  if (HARNESS.test(path)) return 'bench harness';
  return 'other';
}

function shortLocation(frame: CallFrame): string {
  if (!frame.url) return 'native';
  const path = frame.url.replace(/^file:\/\//, '');
  const short = /.*\/node_modules\/(.*)$/.exec(path)?.[1] ?? /\/dist\/(.*)$/.exec(path)?.[1] ?? path;
  return `${short}:${frame.lineNumber + 1}`;
}

interface FunctionTime {
  name: string;
  location: string;
  pkg: string;
  self: number;
  total: number;
}

interface Analysis {
  /** µs sampled, and of that µs not idle. */
  sampled: number;
  busy: number;
  functions: FunctionTime[];
  /** self: the leaf frame's package; owner: the nearest package on the stack that is not node's own. */
  packages: Array<{ pkg: string; self: number; owner: number; total: number }>;
}

const NOT_AN_OWNER = new Set(['node internals', 'native', '(program)', '(root)']);

/** Time of each sample: the interval until the next sample (the last gets the mean). */
function sampleDurations(profile: CpuProfile): number[] {
  const { samples, timeDeltas } = profile;
  const mean = (profile.endTime - profile.startTime) / Math.max(1, samples.length);
  return samples.map((_, index) => Math.max(0, index + 1 < timeDeltas.length ? timeDeltas[index + 1]! : mean));
}

export function analyseProfile(profile: CpuProfile): Analysis {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const functions = new Map<string, FunctionTime>();
  const packageOfNode = new Map<number, string>();
  const nodePackage = (id: number): string => {
    const known = packageOfNode.get(id);
    if (known) return known;
    const frame = byId.get(id)!.callFrame;
    const special = frame.url ? undefined : SPECIAL[frame.functionName];
    const parentId = parent.get(id);
    const pkg = special ?? (frame.url ? packageOfUrl(frame.url) : parentId === undefined ? 'native' : nodePackage(parentId));
    packageOfNode.set(id, pkg);
    return pkg;
  };
  const functionOf = (id: number): FunctionTime => {
    const frame = byId.get(id)!.callFrame;
    const key = `${frame.functionName}|${frame.url}|${frame.lineNumber}|${frame.columnNumber}`;
    let entry = functions.get(key);
    if (!entry) {
      const name = SPECIAL[frame.functionName] ?? `${frame.functionName || '(anonymous)'}${frame.url ? '' : ' [native]'}`;
      entry = { name, location: shortLocation(frame), pkg: nodePackage(id), self: 0, total: 0 };
      functions.set(key, entry);
    }
    return entry;
  };
  // Each node's stack, as distinct functions and distinct packages (for total time), and the
  // package that owns the sample (node's own code works for its caller), computed once.
  const stacks = new Map<number, { functions: FunctionTime[]; packages: string[]; owner: string }>();
  const stackOf = (id: number) => {
    let stack = stacks.get(id);
    if (!stack) {
      const seenFunctions = new Set<FunctionTime>();
      const seenPackages = new Set<string>();
      let owner: string | undefined;
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        if (byId.get(at)!.callFrame.functionName === '(root)') continue;
        seenFunctions.add(functionOf(at));
        const pkg = nodePackage(at);
        seenPackages.add(pkg);
        if (owner === undefined && !NOT_AN_OWNER.has(pkg)) owner = pkg;
      }
      stack = { functions: [...seenFunctions], packages: [...seenPackages], owner: owner ?? nodePackage(id) };
      stacks.set(id, stack);
    }
    return stack;
  };

  const packageSelf = new Map<string, number>();
  const packageOwner = new Map<string, number>();
  const packageTotal = new Map<string, number>();
  const durations = sampleDurations(profile);
  let sampled = 0;
  let idle = 0;
  profile.samples.forEach((id, index) => {
    const duration = durations[index]!;
    sampled += duration;
    const leaf = functionOf(id);
    leaf.self += duration;
    if (leaf.pkg === '(idle)') idle += duration;
    packageSelf.set(leaf.pkg, (packageSelf.get(leaf.pkg) ?? 0) + duration);
    const stack = stackOf(id);
    packageOwner.set(stack.owner, (packageOwner.get(stack.owner) ?? 0) + duration);
    for (const entry of stack.functions) entry.total += duration;
    for (const pkg of stack.packages) packageTotal.set(pkg, (packageTotal.get(pkg) ?? 0) + duration);
  });
  return {
    sampled,
    busy: sampled - idle,
    functions: [...functions.values()],
    packages: [...packageTotal.keys()].map((pkg) => ({
      pkg,
      self: packageSelf.get(pkg) ?? 0,
      owner: packageOwner.get(pkg) ?? 0,
      total: packageTotal.get(pkg) ?? 0,
    })),
  };
}

export interface SummaryOptions {
  top: number;
  /** Tokens served while the profile ran: figures become µs per token. */
  tokens?: number;
}

export function formatProfileSummary(profile: CpuProfile, { top, tokens }: SummaryOptions): string {
  const analysis = analyseProfile(profile);
  const per = tokens ? 1 / tokens : 1e-6;
  const unit = tokens ? 'µs/token' : 's';
  const amount = (micros: number) => (micros * per).toFixed(tokens ? 1 : 3);
  const share = (micros: number) => `${((100 * micros) / Math.max(1, analysis.busy)).toFixed(1)}%`;
  const lines: string[] = [];
  lines.push(
    `sampled ${(analysis.sampled / 1e6).toFixed(2)} s, busy ${(analysis.busy / 1e6).toFixed(2)} s` +
      (tokens ? `, ${tokens} tokens: ${(analysis.busy / tokens).toFixed(0)} µs of main-thread time per token` : '') +
      ' (percentages are of busy time; native code counts for its JS caller)',
  );
  const packages = analysis.packages.filter(({ pkg }) => pkg !== '(idle)' && pkg !== '(root)').sort((a, b) => b.owner - a.owner);
  lines.push('', 'by package (self: in its own code; own+node: also in node internals and natives it called; total: anywhere on the stack)');
  lines.push(
    formatTable(
      ['package', `self ${unit}`, 'self', `own+node ${unit}`, 'own+node', `total ${unit}`, 'total'],
      packages.map(({ pkg, self, owner, total }) => [pkg, amount(self), share(self), amount(owner), share(owner), amount(total), share(total)]),
    ),
  );
  const functionTable = (title: string, list: FunctionTime[]) => {
    lines.push('', title);
    lines.push(
      formatTable(
        [`self ${unit}`, 'self', `total ${unit}`, 'total', 'package', 'function', 'location'],
        list.map((entry) => [amount(entry.self), share(entry.self), amount(entry.total), share(entry.total), entry.pkg, entry.name, entry.location]),
      ),
    );
  };
  const busyFunctions = analysis.functions.filter((entry) => entry.pkg !== '(idle)' && entry.pkg !== '(root)');
  const bySelf = [...busyFunctions].sort((a, b) => b.self - a.self);
  const byTotal = [...busyFunctions].sort((a, b) => b.total - a.total);
  functionTable(`top ${top} functions by self time`, bySelf.slice(0, top));
  functionTable(`top ${top} functions by total time`, byTotal.slice(0, top));
  if (bySelf.some((entry) => entry.pkg === 'ours')) {
    functionTable(`top ${top} functions of ours by self time`, bySelf.filter((entry) => entry.pkg === 'ours').slice(0, top));
    functionTable(`top ${top} functions of ours by total time`, byTotal.filter((entry) => entry.pkg === 'ours').slice(0, top));
  }
  return lines.join('\n');
}

function option(args: string[], name: string): number | undefined {
  const index = args.indexOf(name);
  if (index < 0) return undefined;
  const value = Number(args[index + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} needs a positive integer`);
  return value;
}

function main(args: string[]): void {
  const file = args.find((arg, index) => !arg.startsWith('--') && !args[index - 1]?.startsWith('--'));
  if (!file) {
    console.error('usage: node dist/bench/profile-summary.js <file.cpuprofile> [--top 15] [--tokens N]');
    process.exitCode = 2;
    return;
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const tokens = option(args, '--tokens');
  console.log(formatProfileSummary(profile, { top: option(args, '--top') ?? 15, ...(tokens ? { tokens } : {}) }));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
