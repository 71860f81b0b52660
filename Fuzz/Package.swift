// swift-tools-version: 6.1
// libFuzzer targets for NativeAuth's parsers of untrusted input. Not part of the root package:
// every module is built with `-sanitize=fuzzer,address`, and the executable's entry point hands
// control to libFuzzer. scripts/fuzz builds and runs it (Linux).
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder; this package sits in the root package's.
let root = Context.packageDirectory.split(separator: "/").dropLast().last.map { $0.lowercased() } ?? "nativeauth"

let package = Package(
    name: "NativeAuthFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .target(name: "CFuzzerDriver"),
        .executableTarget(
            name: "NativeAuthFuzz",
            dependencies: [
                "CFuzzerDriver",
                .product(name: "NativeAuth", package: root),
                .product(name: "NativeAuthTesting", package: root),
                .product(name: "NativeAuthGitHub", package: root),
                .product(name: "LenientJSON", package: root),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ]
)
