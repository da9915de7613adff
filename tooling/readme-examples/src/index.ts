export { type PublishedPackage, publishedPackages, REPOSITORY_ROOT } from "./published-packages.ts";
export {
  type ExampleMode,
  packageName,
  type ReadmeExample,
  type ReadmeScan,
  scanReadme,
} from "./scan-readme.ts";
