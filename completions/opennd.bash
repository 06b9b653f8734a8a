# bash completion for the OpenND tools (ndinfo, ndinstall, ndperf, ndrping,
# ndconformance, ndksmbd, ndbaseline): options as each tool's --help lists
# them, values where a tool has a fixed set, files and directories for paths.
# Installed once per tool under share/bash-completion/completions.

_opennd_options() {  # the option words of `$1 --help`, cached per tool
    local tool=$1 var
    var="_opennd_opts_${tool//[^a-zA-Z0-9]/_}"
    if [[ -z ${!var-} ]]; then
        printf -v "$var" '%s' "$("$tool" --help 2>&1 | grep -oE '(^|[][ ,|(])--?[a-zA-Z0-9][a-zA-Z0-9-]*' |
            sed -E 's/^[][ ,|(]//' | sort -u | tr '\n' ' ')"
    fi
    printf '%s' "${!var}"
}

_opennd_complete() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} tool=${COMP_WORDS[0]}
    COMPREPLY=()
    case $prev in
        --catalog|-d) COMPREPLY=($(compgen -d -- "$cur")); return;;
        --library|-f|--junit|-i|--install) COMPREPLY=($(compgen -f -- "$cur")); return;;
        -t|--test)
            [[ ${tool##*/} == ndperf ]] && {
                COMPREPLY=($(compgen -W "send_lat write_lat read_lat send_bw write_bw read_bw" -- "${cur##*,}"))
                return
            };;
        --transport) COMPREPLY=($(compgen -W "shm copy tcp" -- "$cur")); return;;
    esac
    if [[ ${tool##*/} == ndperf && $COMP_CWORD -eq 1 && $cur != -* ]]; then
        COMPREPLY=($(compgen -W "perf mr connect-rate loop" -- "$cur"))
        return
    fi
    if [[ ${tool##*/} == ndksmbd && $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "local server client" -- "$cur"))
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_opennd_options "$tool")" -- "$cur"))
    elif [[ ${tool##*/} == ndbaseline ]]; then
        COMPREPLY=($(compgen -W "cacheline-pingpong shm-pingpong shm-copy-bw cma-write-bw cma-read-bw cma-write-pingpong cma-read-lat tcp-pingpong tcp-stream" -- "$cur"))
    fi
}

complete -F _opennd_complete ndinfo ndinstall ndperf ndrping ndconformance ndksmbd ndbaseline
