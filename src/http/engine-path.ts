/** A request path as the engine routes it: case-insensitively, trailing slashes ignored. */
export function engineRouteKey(path: string): string {
  return path.toLowerCase().replace(/\/+$/, '');
}
