/** The declared-document checker under the TypeBox the tests load (0.34); cases in ./schema/check-cases.ts. */
import { schemaCheckCases } from "./schema/check-cases.ts";

schemaCheckCases("0.34");
