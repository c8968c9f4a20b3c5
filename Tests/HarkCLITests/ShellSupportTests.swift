import Foundation
import Testing

/// Shell completions (swift-argument-parser's, from the built binary), the checked-in manual page
/// and `scripts/install-shell-support`: the scripts parse in their shells and really complete, the
/// page is what `scripts/generate-manual` makes from the code today, renders cleanly and documents
/// every command and option the binary has.
@Suite struct ShellSupportTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let manualPage = repository.appendingPathComponent("man/hark.1").path

    /// A scratch directory, removed with the value.
    final class Scratch {
        let directory: URL
        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("hark-shell-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
    }

    /// The environment for the shells: hark's directory first on PATH, for completions that ask it.
    static var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = harkBinary.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["LC_ALL"] = "C.UTF-8"
        return environment
    }

    private func run(_ executable: String, _ arguments: [String], environment: [String: String] = environment,
                     in scratch: Scratch) throws -> ToolResult {
        try RunningProcess(URL(fileURLWithPath: executable), arguments, environment: environment, scratch: scratch.directory).wait()
    }

    /// `hark --generate-completion-script shell`, written to a file in `scratch`.
    private func completionScript(_ shell: String, in scratch: Scratch) throws -> String {
        let result = try run(harkBinary.path, ["--generate-completion-script", shell], in: scratch)
        #expect(result.status == 0 && result.standardError.isEmpty, "\(result.standardError)")
        let path = scratch.path("hark.\(shell)")
        try result.standardOutput.write(to: URL(fileURLWithPath: path))
        return path
    }

    private func lines(_ result: ToolResult) -> [String] {
        String(decoding: result.standardOutput, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test(arguments: [("bash", "complete -o filenames -F _hark hark"), ("zsh", "#compdef hark"), ("fish", "complete -c 'hark'")])
    func completionScriptsAreGeneratedForEveryShell(_ shell: String, _ marker: String) throws {
        let scratch = try Scratch()
        let script = try String(contentsOfFile: completionScript(shell, in: scratch), encoding: .utf8)
        #expect(script.contains(marker) && script.contains("record") && script.contains("no-auto-tags"))
    }

    /// A shell the parser has no script for is one line naming the ones it has (until 2026-11-29
    /// the parser's three lines, shown with their newlines escaped).
    @Test func aShellWithoutAScriptIsOneLineNamingTheOthers() throws {
        let scratch = try Scratch()
        let result = try run(harkBinary.path, ["--generate-completion-script", "tcsh"], in: scratch)
        #expect(result.status == 64)
        #expect(result.errorLines == ["hark: Can't generate completion scripts for 'tcsh'; use --generate-completion-script=<shell> "
                                      + "with one of: zsh bash fish (see 'hark --help')"], "\(result.standardError)")
        #expect(result.standardOutput.isEmpty)
    }

    @Test func bashCompletionParsesAndOffersOptionsValuesAndSubcommands() throws {
        let scratch = try Scratch()
        let script = try completionScript("bash", in: scratch)
        let bash = try #require(findOnPath("bash"))
        let syntax = try run(bash, ["-n", script], in: scratch)
        #expect(syntax.status == 0, "\(syntax.standardError)")

        // What bash does on Tab: COMP_WORDS/COMP_CWORD/COMP_LINE/COMP_POINT set, the function
        // registered with `complete -F` called with the command, the current and previous words.
        let driver = """
            source "$1"; shift
            function=$(complete -p hark | sed -E 's/.* -F ([^ ]+) .*/\\1/')
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
            "$function" hark "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        func offered(_ words: String...) throws -> [String] {
            let result = try run(bash, ["-c", driver, "driver", script] + words, in: scratch)
            #expect(result.status == 0 && result.standardError.isEmpty, "\(words): \(result.standardError)")
            return lines(result)
        }
        #expect(try offered("hark", "record", "--for") == ["--format"])
        #expect(try offered("hark", "record", "--format", "") == ["flac", "opus", "wav", "raw"])
        #expect(try offered("hark", "record", "-o", "x.flac", "--ti").contains("--title"))
        #expect(Set(try offered("hark", "")).isSuperset(of: ["record", "devices", "permissions"]))
        #expect(Set(try offered("hark", "permissions", "")).isSuperset(of: ["status", "grant", "deny", "reset", "log"]))
        // Values of -f, and file names where a file is named (none were offered: Tab only beeped).
        #expect(try offered("hark", "record", "-f", "") == ["S16_LE", "S24_LE", "S32_LE", "FLOAT_LE"])
        #expect(FileManager.default.createFile(atPath: scratch.path("take1.flac"), contents: Data()))
        #expect(try offered("hark", "record", "-o", scratch.path("ta")).contains(scratch.path("take1.flac")))
        #expect(try offered("hark", "repair", scratch.path("ta")).contains(scratch.path("take1.flac")))
    }

    @Test(.enabled(if: findOnPath("zsh") != nil, "zsh is not installed (scripts/install-deps installs it)"))
    func zshCompletionParsesAndRegistersItself() throws {
        let scratch = try Scratch()
        let script = try completionScript("zsh", in: scratch)
        let zsh = try #require(findOnPath("zsh"))
        let syntax = try run(zsh, ["-n", script], in: scratch)
        #expect(syntax.status == 0, "\(syntax.standardError)")
        // Sourced after compinit (-D: no dump file), the script registers _hark for hark.
        var environment = Self.environment
        environment["HOME"] = scratch.directory.path
        let loaded = try run(zsh, ["-fc", "autoload -Uz compinit && compinit -u -D && source \"$1\" && print -r -- ${_comps[hark]}",
                                   "zsh", script], environment: environment, in: scratch)
        #expect(loaded.status == 0 && lines(loaded) == ["_hark"], "\(loaded.standardError)")
    }

    @Test(.enabled(if: findOnPath("fish") != nil, "fish is not installed (scripts/install-deps installs it)"))
    func fishCompletionParsesAndOffersOptions() throws {
        let scratch = try Scratch()
        let script = try completionScript("fish", in: scratch)
        let fish = try #require(findOnPath("fish"))
        let syntax = try run(fish, ["-n", script], in: scratch)
        #expect(syntax.status == 0, "\(syntax.standardError)")
        var environment = Self.environment
        environment["HOME"] = scratch.directory.path
        environment["XDG_CONFIG_HOME"] = scratch.path("config")
        environment["XDG_DATA_HOME"] = scratch.path("data")
        // `complete -C` prints what Tab would offer, one "candidate<TAB>description" per line.
        func offered(_ line: String) throws -> [String] {
            let result = try run(fish, ["--no-config", "-c", "source $argv[1]; complete -C $argv[2]", script, line],
                                 environment: environment, in: scratch)
            #expect(result.status == 0, "\(line): \(result.standardError)")
            return lines(result).map { String($0.prefix { $0 != "\t" }) }
        }
        #expect(try offered("hark record --for") == ["--format"])
        #expect(try offered("hark record --format ") == ["flac", "opus", "wav", "raw"])
        #expect(Set(try offered("hark permissions ")).isSuperset(of: ["status", "grant", "deny", "reset", "log"]))
        #expect(try offered("hark record -f ") == ["S16_LE", "S24_LE", "S32_LE", "FLOAT_LE"])
        #expect(FileManager.default.createFile(atPath: scratch.path("take1.flac"), contents: Data()))
        #expect(try offered("hark record -o \(scratch.path("ta"))").contains(scratch.path("take1.flac")))
        #expect(try offered("hark repair \(scratch.path("ta"))").contains(scratch.path("take1.flac")))
    }

    @Test func manualPageIsWhatTheCodeGeneratesToday() throws {
        let scratch = try Scratch()
        let result = try run(Self.repository.appendingPathComponent("scripts/generate-manual").path,
                             ["--check", Self.manualPage, "--hark", harkBinary.path], in: scratch)
        #expect(result.status == 0, "\(result.standardError)")
    }

    @Test func manualPageRendersAndDocumentsEveryCommandAndOption() throws {
        let scratch = try Scratch()
        let groff = try #require(findOnPath("groff"), "groff is not installed (scripts/install-deps installs groff-base)")
        // -ww: every warning; -P-cbou: plain text, no escape sequences or overstrikes.
        let rendered = try run(groff, ["-mandoc", "-Tutf8", "-ww", "-P-cbou", Self.manualPage], in: scratch)
        #expect(rendered.status == 0 && rendered.standardError.isEmpty, "\(rendered.standardError)")
        let page = String(decoding: rendered.standardOutput, as: UTF8.self)
        #expect(page.contains("HARK(1)") && page.contains("SYNOPSIS") && page.contains("Sample rate in Hz (1000–768000; default 48000)"))

        // Every command and option the binary itself describes.
        let dump = try run(harkBinary.path, ["--experimental-dump-help"], in: scratch)
        let root = try #require(try JSONSerialization.jsonObject(with: dump.standardOutput) as? [String: Any])["command"]
        var missing: [String] = []
        var (commandsChecked, optionsChecked) = (0, 0)
        func visit(_ command: [String: Any], path: [String]) {
            commandsChecked += 1
            if path.count > 1, !page.contains(path.joined(separator: " ")) { missing.append(path.joined(separator: " ")) }
            for argument in command["arguments"] as? [[String: Any]] ?? [] where argument["shouldDisplay"] as? Bool != false {
                for name in argument["names"] as? [[String: String]] ?? [] where name["kind"] == "long" {
                    optionsChecked += 1
                    if !page.contains("--\(name["name"]!)") { missing.append("\(path.joined(separator: " ")) --\(name["name"]!)") }
                }
            }
            for subcommand in command["subcommands"] as? [[String: Any]] ?? [] where subcommand["shouldDisplay"] as? Bool != false {
                visit(subcommand, path: path + [subcommand["commandName"] as! String])
            }
        }
        let command = try #require(root as? [String: Any])
        visit(command, path: ["hark"])
        // The dump was read as expected (a change of its layout would visit nothing and pass):
        // hark has ten commands and subcommands or more, and record alone has dozens of options.
        #expect(commandsChecked >= 10 && optionsChecked >= 40, "\(commandsChecked) commands and \(optionsChecked) options checked")
        #expect(missing.isEmpty, "not in the manual page: \(missing)")
    }

    @Test func installScriptPutsEachFileWhereItsShellLooksAndRemovesThem() throws {
        let scratch = try Scratch()
        let install = Self.repository.appendingPathComponent("scripts/install-shell-support").path
        let bash = try String(contentsOfFile: completionScript("bash", in: scratch), encoding: .utf8)
        let manual = try String(contentsOfFile: Self.manualPage, encoding: .utf8)
        func expectInstalled(_ files: [String: String], sourceLocation: SourceLocation = #_sourceLocation) throws {
            for (path, expected) in files {
                #expect(FileManager.default.fileExists(atPath: path), "\(path)", sourceLocation: sourceLocation)
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
                #expect(text.contains(expected), "\(path)", sourceLocation: sourceLocation)
            }
        }

        // System-wide, staged under a destination directory as a package build would.
        let stage = scratch.path("stage")
        let system = try run(install, ["--destdir", stage, "--hark", harkBinary.path], in: scratch)
        #expect(system.status == 0, "\(system.standardError)")
        try expectInstalled([
            stage + "/usr/local/share/bash-completion/completions/hark": bash,
            stage + "/usr/local/share/zsh/site-functions/_hark": "#compdef hark",
            stage + "/usr/local/share/fish/vendor_completions.d/hark.fish": "complete -c 'hark'",
            stage + "/usr/local/share/man/man1/hark.1": manual,
        ])

        // Per user, in the XDG directories under HOME.
        let home = scratch.path("home")
        var environment = Self.environment
        environment["HOME"] = home
        environment.removeValue(forKey: "XDG_DATA_HOME")
        environment.removeValue(forKey: "XDG_CONFIG_HOME")
        let user = try run(install, ["--user", "--hark", harkBinary.path], environment: environment, in: scratch)
        #expect(user.status == 0, "\(user.standardError)")
        let userFiles = [
            home + "/.local/share/bash-completion/completions/hark": bash,
            home + "/.local/share/zsh/site-functions/_hark": "#compdef hark",
            home + "/.config/fish/completions/hark.fish": "complete -c 'hark'",
            home + "/.local/share/man/man1/hark.1": manual,
        ]
        try expectInstalled(userFiles)

        let removed = try run(install, ["--user", "--uninstall"], environment: environment, in: scratch)
        #expect(removed.status == 0, "\(removed.standardError)")
        #expect(userFiles.keys.allSatisfy { !FileManager.default.fileExists(atPath: $0) })

        let wrong = try run(install, ["--prefix"], in: scratch)
        #expect(wrong.status == 64 && wrong.standardError.contains("--prefix needs a directory"))
    }

    /// `scripts/install --uninstall` removes what an install to that place put there, and nothing
    /// else: a prefix copied with its manifest (`cp -a p3 p4`) named p3's files, and uninstalling
    /// p4 removed them.
    @Test func uninstallRemovesOnlyWhatAnInstallThereWrote() throws {
        let scratch = try Scratch()
        let install = Self.repository.appendingPathComponent("scripts/install").path
        let original = scratch.path("p3"), copy = scratch.path("p4")
        let installed = ["/bin/hark", "/libexec/hark/hark-privacy-switch", "/share/man/man1/hark.1", "/share/hark/install-manifest"]
        for prefix in [original, copy] {
            for file in installed {
                try FileManager.default.createDirectory(atPath: ((prefix + file) as NSString).deletingLastPathComponent,
                                                        withIntermediateDirectories: true)
                #expect(FileManager.default.createFile(atPath: prefix + file, contents: Data("x".utf8)))
            }
            // Both manifests name the original's files, as a copy of the original's does.
            try (installed.map { original + $0 } + [original + "/bin/"]).joined(separator: "\n")
                .appending("\n").write(toFile: prefix + "/share/hark/install-manifest", atomically: true, encoding: .utf8)
        }
        let refused = try run(install, ["--prefix", copy, "--uninstall"], in: scratch)
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("left \(original)/bin/hark alone: an install to --prefix \(copy) does not put it there"),
                "\(refused.standardError)")
        #expect(installed.allSatisfy { FileManager.default.fileExists(atPath: original + $0) }, "the original's files stay")
        #expect(FileManager.default.fileExists(atPath: copy + "/share/hark/install-manifest"), "the copy's manifest says what is left")

        let removed = try run(install, ["--prefix", original, "--uninstall"], in: scratch)
        #expect(removed.status == 0, "\(removed.standardError)")
        #expect(installed.allSatisfy { !FileManager.default.fileExists(atPath: original + $0) })
        #expect(!FileManager.default.fileExists(atPath: original + "/bin"), "the folder it made, empty, goes too")
    }
}
