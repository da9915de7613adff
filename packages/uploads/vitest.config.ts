import { defineConfig } from "vitest/config";
import { stowageVitestConfig } from "../../tooling/vitest.shared.ts";

const shared = stowageVitestConfig();

export default defineConfig({
  ...shared,
  // The RGW tests load the AWS SDK (through storage-s3, a devDependency), which warns once per
  // process that its 2027 releases need Node 22; tests run on Node 20.
  test: { ...shared.test, env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" } },
});
