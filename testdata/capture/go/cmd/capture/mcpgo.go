package main

func captureMCPGo(string) {}
