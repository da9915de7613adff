// pnpm hooks. beforePacking shapes the manifest that `pnpm pack` / `pnpm publish` put in a
// tarball: a user installs none of our devDependencies (several are private workspace packages
// that are never published) and runs none of our scripts (build, tests, benches), so neither is
// shipped. The package.json in the repository is left as it is.
module.exports = {
  hooks: {
    beforePacking(pkg) {
      delete pkg.devDependencies;
      delete pkg.scripts;
      return pkg;
    },
  },
};
