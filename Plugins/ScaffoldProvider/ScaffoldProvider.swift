import Foundation
import PackagePlugin

/// `swift package --allow-writing-to-package-directory scaffold-provider --name Acme [--issuer URL | --static] [--output DIR]`
///
/// Writes a NativeAuth provider module and a test that runs it against a local server, never
/// overwriting a file, then prints the lines to add to Package.swift.
@main
struct ScaffoldProvider: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let request: ScaffoldRequest
        do {
            request = try ScaffoldRequest(arguments: arguments)
        } catch {
            throw ScaffoldError("\(error)\n\n" + ScaffoldRequest.usage)
        }
        let package = context.package
        let existing = Set(package.targets.map(\.name))
        for name in [request.moduleName, request.testModuleName] where existing.contains(name) {
            throw ScaffoldError(
                "the package already has a target named \(name); choose another --name, or remove that target"
            )
        }
        let root = package.directoryURL
        let files = [
            (request.modulePath + "/" + request.typeName + ".swift", Templates.provider(request)),
            (request.testPath + "/" + request.typeName + "Tests.swift", Templates.tests(request)),
        ]
        // Check everything before writing anything: never overwrite, never write half a module.
        for (path, _) in files where FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path) {
            throw ScaffoldError(
                "\(path) already exists; nothing was written. Remove it, or choose another --name or --output")
        }
        for (path, text) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            // `withoutOverwriting` makes the check above atomic with the write.
            try Data(text.utf8).write(to: url, options: .withoutOverwriting)
            print("Created \(path)")
        }
        print(Templates.instructions(request, dependencies: Dependencies(package: package)))
    }
}

/// A usage error, printed as it is.
struct ScaffoldError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What to write, from the command line.
struct ScaffoldRequest {
    static let usage = """
        usage: swift package --allow-writing-to-package-directory scaffold-provider --name NAME \
        [--issuer URL | --static] [--output DIR]

          --name NAME     the provider's name, a Swift type name like Acme or AcmeCloud
          --issuer URL    the issuer to discover the endpoints from by default (OpenID Connect discovery)
          --static        no discovery: fixed endpoints on a host (like GitHub)
          --output DIR    where the module goes (default Sources/NAMEProvider)
        """

    enum Mode {
        /// Discovery from the configured issuer, with a default issuer when given.
        case discovery(defaultIssuer: String?)
        /// Fixed endpoints on a host.
        case fixedEndpoints
    }

    /// The type's name without `Provider`: `Acme`.
    let name: String
    /// `AcmeProvider`: the module and the type.
    let typeName: String
    /// `acme`: the registry id.
    let id: String
    let mode: Mode
    /// Where the module goes, relative to the package.
    let modulePath: String
    /// Whether the module's path is not the default one (so Package.swift needs `path:`).
    let customPath: Bool

    var moduleName: String { typeName }
    var testModuleName: String { typeName + "Tests" }
    var testPath: String { "Tests/" + testModuleName }

    init(arguments: [String]) throws {
        var extractor = ArgumentExtractor(arguments)
        let names = extractor.extractOption(named: "name")
        let issuers = extractor.extractOption(named: "issuer")
        let outputs = extractor.extractOption(named: "output")
        let isStatic = extractor.extractFlag(named: "static") > 0
        if let unknown = extractor.remainingArguments.first {
            throw ScaffoldError("unknown argument \(unknown)")
        }
        guard names.count == 1, let given = names.first else {
            throw ScaffoldError(names.isEmpty ? "--name is missing" : "give --name once")
        }
        guard issuers.count <= 1, outputs.count <= 1 else {
            throw ScaffoldError("give --issuer and --output at most once")
        }
        try Self.validate(name: given)
        name = given.hasSuffix("Provider") && given != "Provider" ? String(given.dropLast("Provider".count)) : given
        typeName = name + "Provider"
        id = name.lowercased()
        if let issuer = issuers.first {
            guard !isStatic else { throw ScaffoldError("--issuer and --static exclude each other: pick one") }
            guard let url = URL(string: issuer), let scheme = url.scheme, ["https", "http"].contains(scheme),
                url.host?.isEmpty == false, url.query == nil, url.fragment == nil
            else {
                throw ScaffoldError("--issuer \(issuer) is not an issuer URL; give one like https://id.acme.example")
            }
            guard !issuer.contains("\""), !issuer.contains("\\") else {
                throw ScaffoldError("--issuer \(issuer) contains quotes or backslashes")
            }
            mode = .discovery(defaultIssuer: issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer)
        } else {
            mode = isStatic ? .fixedEndpoints : .discovery(defaultIssuer: nil)
        }
        if let output = outputs.first {
            var path = output
            while path.hasSuffix("/") { path.removeLast() }
            if path.hasPrefix("./") { path.removeFirst(2) }
            guard !path.isEmpty, !path.hasPrefix("/"), !path.split(separator: "/").contains("..") else {
                throw ScaffoldError("--output \(output) must be a directory inside the package, like Sources/Acme")
            }
            guard !path.contains("\""), !path.contains("\\") else {
                throw ScaffoldError("--output \(output) contains quotes or backslashes")
            }
            modulePath = path
        } else {
            modulePath = "Sources/" + typeName
        }
        customPath = modulePath != "Sources/" + typeName
    }

    static let keywords: Set<String> = [
        "Any", "Protocol", "Self", "Type", "associatedtype", "class", "deinit", "enum", "extension", "func",
        "import", "init", "inout", "let", "operator", "protocol", "static", "struct", "subscript", "typealias",
        "var", "break", "case", "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if",
        "in", "repeat", "return", "switch", "where", "while", "as", "catch", "false", "is", "nil", "super", "self",
        "throw", "throws", "true", "try", "Provider",
    ]

    static func validate(name: String) throws {
        let scalars = Array(name.unicodeScalars)
        let isASCIILetter: (Unicode.Scalar) -> Bool = { ("a"..."z").contains($0) || ("A"..."Z").contains($0) }
        guard let first = scalars.first,
            isASCIILetter(first) || first == "_",
            scalars.allSatisfy({ isASCIILetter($0) || ("0"..."9").contains($0) || $0 == "_" }),
            !keywords.contains(name)
        else {
            throw ScaffoldError(
                "--name \(name) is not a valid Swift type name: use letters, digits and _, not starting with a digit, like Acme"
            )
        }
        guard ("A"..."Z").contains(first) else {
            throw ScaffoldError("--name \(name) should start with a capital letter: it names a type, like Acme")
        }
    }
}

/// How the new targets name NativeAuth's products in this package.
struct Dependencies {
    /// `"NativeAuth"` inside NativeAuth's own package, else `.product(name: "NativeAuth", package: "…")`.
    let reference: (String) -> String
    /// Set when the package does not depend on NativeAuth (then the lines guess its identity).
    let missingDependency: Bool

    init(package: Package) {
        if package.targets.contains(where: { $0.name == "NativeAuth" })
            && package.products.contains(where: { $0.name == "NativeAuthTesting" })
        {
            reference = { "\"\($0)\"" }
            missingDependency = false
            return
        }
        let dependency = package.dependencies.first { dependency in
            dependency.package.products.contains { $0.name == "NativeAuth" }
        }
        let identity = dependency?.package.id ?? "nativeauth"
        reference = { ".product(name: \"\($0)\", package: \"\(identity)\")" }
        missingDependency = dependency == nil
    }
}
