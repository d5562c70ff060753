export type Node = Readonly<Record<string, unknown>>;

export const isNode = (v: unknown): v is Node => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Visits every object of a parse tree, without recursion: untrusted input nests as deep as the
 * parser lets it, and a recursive walk would overflow the stack first. Stops at the first problem.
 */
export function findProblem(root: unknown, visit: (node: Node) => string | undefined): string | undefined {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const item = stack.pop();
    if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push(item[i]);
      continue;
    }
    if (!isNode(item)) continue;
    const problem = visit(item);
    if (problem !== undefined) return problem;
    const values = Object.values(item);
    for (let i = values.length - 1; i >= 0; i--) if (typeof values[i] === 'object' && values[i] !== null) stack.push(values[i]);
  }
  return undefined;
}
