/** The oracle pool's worker entry (piscina). */
import { servePoolTask } from '../actors/poolTask.js';
import { oracleTask } from '../actors/oracleTask.js';

export default servePoolTask(oracleTask);
