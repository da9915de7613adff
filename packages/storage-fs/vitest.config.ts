import { stowageVitestConfig } from "../../tooling/vitest.shared.ts";

// Temporary directories on the disk: this package's subject is the file system itself.
export default stowageVitestConfig({ tempOnDisk: true });
