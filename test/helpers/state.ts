// The SQLite engine behind a test context: tests check the ledger and the queue with their own SQL, independently of
// the state interface they test, and set keys up synchronously.
import type { AppContext } from '../../api/context';
import { SqliteState } from '../../api/store/sqlite';

export function sqliteState(ctx: AppContext): SqliteState {
  if (!(ctx.state instanceof SqliteState)) throw new Error(`this check reads the SQLite engine, not ${ctx.state.engine}`);
  return ctx.state;
}
