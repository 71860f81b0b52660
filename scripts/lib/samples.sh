# Builds another package of this repository (Samples/ by default) into the root's build directory,
# so that what the two share (the dependencies, and NativeAuth's own modules, built from these same
# sources) is not compiled twice, and the sample CLIs land beside the root's test bundle, where the
# process tests find them (Tests/TestSupport, cliPath).
#
#   build_package [--package-path DIR] [swift build arguments...]
#
# SwiftPM 6.3 keeps the build description of the last package built in a build directory and can
# take it for the other's ("No target named … in build description"): it is dropped first, and
# made again by this build.
build_package() {
    local package=Samples
    if [[ ${1:-} == --package-path ]]; then
        package=$2
        shift 2
    fi
    rm -f .build/debug/description.json .build/release/description.json
    swift build --package-path "$package" --scratch-path "$PWD/.build" "$@"
}
