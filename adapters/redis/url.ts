/*
 * What a redis:// URL may say, checked without a connection (and without ioredis, so that the
 * option schema can use it): the store, the server's options and the CLI refuse the same URLs.
 */

/**
 * Why `url` does not name a database as Redis numbers them, or undefined when it does (or names
 * none). The database is the URL's path (`/2`) or its `db` parameter (`?db=2`), and must be a plain
 * non-negative integer: ioredis would send `/abc` as `SELECT NaN` and read `/1x` as database 1.
 * Whether the server has that many databases is the server's call (a SELECT it refuses stops the
 * start). Never quotes the URL.
 */
export function databaseIndexProblem(url: string): string | undefined {
  const parsed = URL.parse(url);
  if (!parsed) return undefined;
  const plain = /^(0|[1-9][0-9]*)$/;
  if (parsed.pathname !== '' && parsed.pathname !== '/' && !plain.test(parsed.pathname.slice(1))) {
    return 'the database (the path after host:port) must be a non-negative integer, like /0';
  }
  if (parsed.searchParams.getAll('db').some((db) => !plain.test(db))) return 'the db parameter must be a non-negative integer, like db=0';
  return undefined;
}
