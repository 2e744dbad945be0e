/** The planner actor's worker entry. */
import { serveActor } from '../actors/serve.js';
import { plannerApi } from '../actors/plannerActor.js';

serveActor(plannerApi);
