// The agent side: what a devbox runs to upload files. It loads only Node and @stowage/core (the
// import-graph test proves it); the policy it checks against comes from `@stowage/uploads`.
export type { UploadProgress } from "./file-body.js";
export { type UploadArtifactOptions, uploadArtifact, uploadArtifacts } from "./upload-artifact.js";
export {
  createUploadArtifactTool,
  type LoadUploadArtifactToolOptions,
  loadUploadArtifactTool,
  type McpCallToolResult,
  type UploadArtifactInputSchema,
  type UploadArtifactTool,
  type UploadArtifactToolOptions,
  type UploadArtifactToolOutput,
  uploadArtifactSdkTool,
  type ZodStringFactory,
} from "./upload-artifact-tool.js";
export {
  type UploadFileOptions,
  type UploadFileResult,
  type UploadFilesOptions,
  uploadFile,
  uploadFiles,
} from "./upload-file.js";
