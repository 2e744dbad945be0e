/** The compiler pool's worker entry (piscina). */
import { servePoolTask } from '../actors/poolTask.js';
import { compileTask } from '../actors/compileTask.js';

export default servePoolTask(compileTask);
